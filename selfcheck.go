package flakegate

import "github.com/flakegate/flakegate/canonjson"

// selfCheckBase is the SCHEDULER record the spec's examples vary.
const selfCheckBase = `{"run_id":"r1","seed":1402,"property_path":"tests/props/test_retry_budget.py",` +
	`"property_sha256":"pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp",` +
	`"fixture_sha256":"ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",` +
	`"base_fixture_sha256":"ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",` +
	`"diff_paths":["src/retry.py"],"candidate_result":"fail","base_seed_result":"pass",` +
	`"retry_results":["pass"],"retry_cap":2,"budget_ok":true,"transcript_complete":true}`

// SelfCheckCase is one of the spec's examples: a change to the base record
// and the label the spec gives it.
type SelfCheckCase struct {
	Name   string
	Change map[string]string // key -> JSON value text
	Want   Label
}

// SelfCheckCases are the spec's self-check assertions and worked records.
var SelfCheckCases = []SelfCheckCase{
	{"scheduler", nil, Scheduler},
	{"fixture digest differs", map[string]string{"fixture_sha256": `"eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"`}, Fixture},
	{"property in diff", map[string]string{"diff_paths": `["tests/props/test_retry_budget.py"]`}, Contaminated},
	{"transcript incomplete", map[string]string{"transcript_complete": `false`}, Incomplete},
	{"budget missed", map[string]string{"budget_ok": `false`}, Budget},
	{"base red", map[string]string{"base_seed_result": `"fail"`}, Property},
	{"candidate passed", map[string]string{"candidate_result": `"pass"`}, Pass},
	{"base not run", map[string]string{"base_seed_result": `"not_run"`}, Incomplete},
	{"worked: digest abc/def", map[string]string{"fixture_sha256": `"abc"`, "base_fixture_sha256": `"def"`}, Fixture},
	{"worked: red on both sides", map[string]string{"base_seed_result": `"fail"`, "retry_results": `[]`}, Property},
	{"worked: not_run with a green retry", map[string]string{"base_seed_result": `"not_run"`, "retry_results": `["pass"]`}, Incomplete},
}

// SelfCheckRecord returns the record bytes of a self-check case.
func SelfCheckRecord(c SelfCheckCase) []byte {
	v, _ := canonjson.Read([]byte(selfCheckBase))
	for i := range v.Members {
		if text, ok := c.Change[v.Members[i].Key]; ok {
			nv, err := canonjson.Read([]byte(text))
			if err != nil {
				panic(err) // the cases above are constants
			}
			v.Members[i].Value = nv
		}
	}
	return canonjson.Append(nil, &v)
}

// SelfCheck classifies every self-check case and returns an error naming
// the first one whose label is not the spec's.
func SelfCheck() error {
	for _, c := range SelfCheckCases {
		d := ClassifyBytes(SelfCheckRecord(c))
		if d.Label != c.Want {
			return Errorf(EINTERNAL, "self-check %q: got %s, want %s (%s)", c.Name, d.Label, c.Want, d.Reason)
		}
		if d.Freeze != (c.Want == Scheduler) {
			return Errorf(EINTERNAL, "self-check %q: freeze is %v", c.Name, d.Freeze)
		}
	}
	return nil
}
