package canonjson

// Kind is the JSON type of a Value.
type Kind uint8

// The JSON kinds.
const (
	KindNull Kind = iota
	KindBool
	KindNumber
	KindString
	KindArray
	KindObject
)

var kindNames = [...]string{"null", "boolean", "number", "string", "array", "object"}

func (k Kind) String() string { return kindNames[k] }

// Value is one JSON value as read from a record, exactly: numbers keep their
// text (a 30-digit seed survives), objects keep their members in input
// order (duplicates are refused by the reader).
type Value struct {
	Kind Kind
	Bool bool
	// Float reports whether a number has a fraction or an exponent (Python
	// reads it as a float, not an int).
	Float bool
	// hint holds what the reader learnt while reading: hintPlain,
	// hintKeyPlain, hintFloat and hintReprFloat. Only a Reader's own
	// hash (ReadSum) trusts it: a caller may edit a Value it was given.
	hint uint8
	// seq is, on an object a Reader read, the node of the Reader's key
	// trie that its keys are exactly (0: none). Like hint, only the
	// Reader that set it reads it.
	seq uint32
	// Str is the decoded string for KindString and the number's literal
	// text for KindNumber.
	Str string
	// f is the float64 of a KindNumber with Float set, when hintFloat says so.
	f float64
	// Members are an object's members in input order, or an array's
	// elements (with empty keys). One slice for both keeps Value small,
	// which is most of the reader's speed.
	Members []Member
}

// The reader's hints.
const (
	// hintPlain: Str is all printable ASCII without '"' and '\\', so its
	// canonical form is Str between quotes.
	hintPlain = 1 << iota
	// hintKeyPlain: the same for the key of the member holding this value.
	hintKeyPlain
	// hintFloat: f is Str read as a float64.
	hintFloat
	// hintReprFloat: Str is a float as Python's repr writes it, so its
	// canonical form is Str.
	hintReprFloat
)

// Len returns the number of an array's elements or an object's members.
func (v *Value) Len() int { return len(v.Members) }

// Elem returns element i of an array.
func (v *Value) Elem(i int) *Value { return &v.Members[i].Value }

// Member is one key and value of an object.
type Member struct {
	Key   string
	Value Value
}

// Get returns the member value for key and whether it is present.
func (v *Value) Get(key string) (*Value, bool) {
	for i := range v.Members {
		if v.Members[i].Key == key {
			return &v.Members[i].Value, true
		}
	}
	return nil, false
}

// IsInt reports whether v is a JSON number without fraction or exponent.
func (v *Value) IsInt() bool { return v.Kind == KindNumber && !v.Float }
