package commission

import "testing"

// TestPolicyKey pins the matching rule: a key that kept a dash, a blank or a leading zero
// would leave "0012-345 67" unmatched against the contract "1234567".
func TestPolicyKey(t *testing.T) {
	for in, want := range map[string]string{
		"0012-345 67":      "1234567",
		"1234567":          "1234567",
		"12.345/67":        "1234567",
		" kv-0815/a ":      "KV0815A",
		"000":              "",
		"":                 "",
		"A-000123":         "A000123",  // only leading zeros of the whole key go
		"LV 0/12\t34_5":    "LV012345", // a zero inside stays
		"ö-12":             "Ö12",
		"\u00a00042\u2013": "42",
	} {
		if got := PolicyKey(in); got != want {
			t.Errorf("PolicyKey(%q) = %q, want %q", in, got, want)
		}
	}
}
