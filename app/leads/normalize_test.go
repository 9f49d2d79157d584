package leads

import "testing"

func TestPhoneKey(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"0170 1234567", "+491701234567"},
		{"+49 170 1234567", "+491701234567"},
		{"0049 (170) 123-4567", "+491701234567"},
		{"030/12345678", "+493012345678"},
		{"+43 1 234567", "+431234567"},
		{"abc", ""},
		{"12", ""},
	} {
		got, ok := PhoneKey(tc.in)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("PhoneKey(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
	if EmailKey("  Anna.Berger@Example.DE ") != "anna.berger@example.de" {
		t.Error("EmailKey")
	}
}
