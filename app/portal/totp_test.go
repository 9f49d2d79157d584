package portal

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/datakeys"
)

// RFC 6238 appendix B (SHA-1 key "12345678901234567890"): the 8-digit values' last six digits
// are the 6-digit codes (the modulus differs, the truncated number does not).
func TestTOTP_RFC6238Vectors(t *testing.T) {
	key := []byte("12345678901234567890")
	for _, tc := range []struct {
		unix int64
		want string
	}{
		{59, "287082"}, {1111111109, "081804"}, {1111111111, "050471"}, {1234567890, "005924"},
		{2000000000, "279037"}, {20000000000, "353130"},
	} {
		if got := hotp(key, uint64(totpStep(time.Unix(tc.unix, 0)))); got != tc.want {
			t.Errorf("T=%d: got %s, want %s", tc.unix, got, tc.want)
		}
	}
}

func TestTOTP_Check(t *testing.T) {
	key := []byte("12345678901234567890")
	now := time.Unix(1111111111, 0)
	cur := totpStep(now)
	code := func(s int64) string { return hotp(key, uint64(s)) }
	for _, tc := range []struct {
		name string
		code string
		last int64
		want int64 // 0: refused
	}{
		{"current step", code(cur), 0, cur},
		{"step before (clock behind)", code(cur - 1), 0, cur - 1},
		{"step after (clock ahead)", code(cur + 1), 0, cur + 1},
		{"two steps off", code(cur - 2), 0, 0},
		{"used step again", code(cur), cur, 0},
		{"earlier step after a later one was used", code(cur - 1), cur, 0},
		{"later step after an earlier one was used", code(cur + 1), cur, cur + 1},
		{"not digits", "12a456", 0, 0},
		{"too short", code(cur)[:5], 0, 0},
		{"too long", code(cur) + "0", 0, 0},
	} {
		got, ok := totpCheck(key, tc.code, now, tc.last)
		if ok != (tc.want != 0) || got != tc.want {
			t.Errorf("%s: got %d %v, want %d", tc.name, got, ok, tc.want)
		}
	}
}

func TestTOTP_SealedPerAccess(t *testing.T) {
	keys := datakeys.MustParse(datakeys.DemoKeys)
	co, a, b := uuid.New(), uuid.New(), uuid.New()
	k, err := newTOTPKey()
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := sealTOTP(keys, co, a, k)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := openTOTP(keys, co, a, sealed); err != nil || string(got) != string(k) {
		t.Fatalf("open: %v", err)
	}
	if _, err := openTOTP(keys, co, b, sealed); err == nil {
		t.Error("a secret moved to another access opened")
	}
}

func TestTOTP_URI(t *testing.T) {
	uri := totpURI([]byte("12345678901234567890"), "Makler & Co", "erika@example.com")
	for _, want := range []string{"otpauth://totp/Makler%20&%20Co:erika@example.com?",
		"secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ", "issuer=Makler+%26+Co", "digits=6", "period=30", "algorithm=SHA1"} {
		if !strings.Contains(uri, want) {
			t.Errorf("%s lacks %s", uri, want)
		}
	}
}
