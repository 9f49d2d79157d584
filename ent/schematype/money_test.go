package schematype

import (
	"encoding/json"
	"testing"
)

func TestMoney(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"1234.5", "1234.50", true}, {"1234.50", "1234.50", true}, {"0", "0.00", true}, {"-3", "-3.00", true},
		{"0.1", "0.10", true}, {"1234.500", "1234.50", true}, {"99999999999.99", "99999999999.99", true},
		{"1234.505", "", false}, {"1e3", "", false}, {"12,50", "", false}, {"", "", false}, {"abc", "", false}, {"1 000", "", false},
	} {
		m, err := ParseMoney(tc.in)
		if (err == nil) != tc.ok || (tc.ok && m.String() != tc.want) {
			t.Errorf("ParseMoney(%q) = %q, %v; want %q ok=%v", tc.in, m, err, tc.want, tc.ok)
		}
	}
	// exact: 0.1 + 0.2 is 0.30, not 0.30000000000000004
	if got := MustMoney("0.1").Add(MustMoney("0.2")).String(); got != "0.30" {
		t.Errorf("0.1 + 0.2 = %s", got)
	}
	b, _ := json.Marshal(struct{ P Money }{MustMoney("1234.5")})
	if string(b) != `{"P":"1234.50"}` {
		t.Errorf("marshal %s", b)
	}
	var v struct{ P Money }
	if err := json.Unmarshal([]byte(`{"P":1234.5}`), &v); err == nil {
		t.Error("a JSON number was accepted as money")
	}
	if err := json.Unmarshal([]byte(`{"P":"7.1"}`), &v); err != nil || v.P.String() != "7.10" {
		t.Errorf("unmarshal %v %s", err, v.P)
	}
	var s Money
	if err := s.Scan([]byte("12.30")); err != nil || s.String() != "12.30" {
		t.Errorf("scan %v %s", err, s)
	}
}
