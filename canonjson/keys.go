package canonjson

// Keys is a fixed list of keys to find in objects. Make one with NewKeys
// and keep it: a Reader remembers, per known key sequence, where a Keys'
// keys are.
type Keys struct {
	keys  []string
	index map[string]int32
}

// NewKeys returns the Keys for keys, which must be distinct.
func NewKeys(keys ...string) *Keys {
	ks := &Keys{keys: append([]string(nil), keys...), index: make(map[string]int32, len(keys))}
	for i, k := range keys {
		if _, dup := ks.index[k]; dup {
			panic("canonjson.NewKeys: duplicate key " + k)
		}
		ks.index[k] = int32(i)
	}
	return ks
}

// Len returns the number of keys.
func (ks *Keys) Len() int { return len(ks.keys) }

// Find sets slots[i], for each key i of ks, to the index in v.Members of
// the member with that key, or -1 (all -1 when v is not an object). slots
// must have ks.Len() elements.
func (ks *Keys) Find(v *Value, slots []int32) {
	slots = slots[:len(ks.keys)]
	for i := range slots {
		slots[i] = -1
	}
	if v.Kind != KindObject {
		return
	}
	for i := range v.Members {
		if k, ok := ks.index[v.Members[i].Key]; ok {
			slots[k] = int32(i)
		}
	}
}

// Find is ks.Find for v, a value rd read last (or a part of it), and
// remembers the slots for objects whose keys are a sequence rd knows.
func (rd *Reader) Find(ks *Keys, v *Value, slots []int32) {
	seq := rd.knownOf(v.seq)
	if seq == nil || v.Kind != KindObject || len(seq.perm) != len(v.Members) {
		ks.Find(v, slots)
		return
	}
	if seq.slotsOf != ks {
		seq.slots = make([]int32, len(ks.keys))
		ks.Find(v, seq.slots)
		seq.slotsOf = ks
	}
	copy(slots[:len(ks.keys)], seq.slots)
}
