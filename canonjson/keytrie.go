package canonjson

import "strings"

// keyTrie holds the key sequences of the objects a Reader has read, as a
// trie: a node is the sequence of keys on the path from the root to it,
// and every such sequence is free of duplicates (a key joins the trie only
// after the object's duplicate check passed). Records from one producer
// repeat a handful of key sequences, in the same order, with optional keys
// here and there: an object whose keys walk down the trie needs no
// duplicate check, and its sorted key order, the canonical text of its
// keys and its Find slots are kept on the node where it ends.
//
// Nodes are only added, never changed or removed, while a value is read,
// so an object may keep the node of its keys so far while nested objects
// add nodes. The trie is emptied before a read when it has grown past
// maxTrieNodes (the records' keys are not from a few sequences after all);
// then it learns the sequences again.
type keyTrie struct {
	nodes    []trieNode // nodes[0] is the root: no key yet
	keyBytes int        // the bytes of all nodes' keys
}

// trieNode is one key of a sequence.
type trieNode struct {
	key string
	// quoted is the key as JSON text, between quotes, when the key is
	// plain (printable ASCII without '"' and '\\'), else "": input that
	// starts with quoted holds exactly this key.
	quoted string
	depth  int32   // the number of keys from the root to here
	kids   []int32 // the nodes one key longer, the newest last
	// hot is the kid an object followed last (0: none), the one to try
	// first.
	hot int32
	// sorted is set when an object with exactly these keys closes.
	sorted *sortedKeys
}

// sortedKeys is what an object with a node's keys needs beyond them.
type sortedKeys struct {
	// perm is the sorted member order (sortMembers over the keys).
	perm []sortKey
	// text[n] is the canonical text before the value of the n-th member
	// in key order: '{' or ',', the quoted key, ':'.
	text []string
	// slots are the slots Find gives for slotsOf in an object with these
	// keys, found when such an object is first asked about.
	slots   []int32
	slotsOf *Keys
}

// The trie's bounds: past them it is emptied before the next read, and no
// node is added during a read.
const (
	maxTrieNodes    = 4096
	maxTrieKeyBytes = 256 << 10
)

// begin readies the trie for a new value.
func (t *keyTrie) begin() {
	if len(t.nodes) == 0 || len(t.nodes) >= maxTrieNodes || t.keyBytes >= maxTrieKeyBytes {
		clear(t.nodes)
		t.nodes = append(t.nodes[:0], trieNode{})
		t.keyBytes = 0
	}
}

// child returns the node below n for key, or 0 when there is none, and
// makes it the one tried first.
func (t *keyTrie) child(n int32, key string) int32 {
	kids := t.nodes[n].kids
	for i := len(kids) - 1; i >= 0; i-- {
		if k := kids[i]; t.nodes[k].key == key {
			t.nodes[n].hot = k
			return k
		}
	}
	return 0
}

// next returns the node below n whose key s starts with, as quoted JSON
// text, and that text's length; 0, 0 when the kid tried first is not one.
func (t *keyTrie) next(n int32, s string) (int32, int) {
	h := t.nodes[n].hot
	if h == 0 {
		return 0, 0
	}
	q := t.nodes[h].quoted
	if len(q) == 0 || len(s) < len(q) || s[:len(q)] != q {
		return 0, 0
	}
	return h, len(q)
}

// extend adds the keys of ms below n, where they are not yet, and returns
// the node of the whole sequence, or 0 when the trie is full. ms must hold
// no duplicate key, nor one of n's sequence.
func (t *keyTrie) extend(n int32, ms []Member) int32 {
	for i := range ms {
		key := ms[i].Key
		c := t.child(n, key)
		if c == 0 {
			if len(t.nodes) >= maxTrieNodes || t.keyBytes >= maxTrieKeyBytes {
				return 0
			}
			c = int32(len(t.nodes))
			node := trieNode{key: strings.Clone(key), depth: t.nodes[n].depth + 1}
			if isPlain(key) {
				node.quoted = `"` + key + `"`
			}
			t.nodes = append(t.nodes, node)
			t.nodes[n].kids = append(t.nodes[n].kids, c)
			t.keyBytes += len(key)
		}
		t.nodes[n].hot = c
		n = c
	}
	return n
}

// isPlain reports whether s is printable ASCII without '"' and '\\'.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7F || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// sortedAt returns the sorted keys of node n, whose sequence is the keys
// of ms, computing them once.
func (t *keyTrie) sortedAt(n int32, ms []Member) *sortedKeys {
	node := &t.nodes[n]
	if node.sorted == nil {
		sk := &sortedKeys{perm: sortMembers(nil, ms)}
		sk.text = make([]string, len(sk.perm))
		for i, k := range sk.perm {
			sep := byte(',')
			if i == 0 {
				sep = '{'
			}
			sk.text[i] = string(append(AppendPythonString([]byte{sep}, ms[k.i].Key), ':'))
		}
		node.sorted = sk
	}
	return node.sorted
}
