package app

import (
	"strings"
	"testing"
)

// TestConfig_Warnings: every key that would be derived from a random APP_SECRET is named at
// start, so an operator learns before the first restart that sealed data would be unreadable
// (the sensitive contact groups were sealed silently under a random key).
func TestConfig_Warnings(t *testing.T) {
	secret := strings.Repeat("s", 32)
	cases := []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"nothing set", map[string]string{}, []string{"APP_SECRET is not set", "WEBHOOK_SECRET_KEYS", "DATA_KEYS"}},
		{"APP_SECRET set", map[string]string{"APP_SECRET": secret}, nil},
		{"only the keys set", map[string]string{"WEBHOOK_SECRET_KEYS": strings.Repeat("A", 43) + "=",
			"DATA_KEYS": "d1:" + strings.Repeat("A", 43) + "="}, []string{"APP_SECRET is not set"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.env["DATABASE_URL"] = "postgres://localhost/x"
			cfg, err := LoadConfig(func(k string) string { return tc.env[k] })
			if err != nil {
				t.Fatal(err)
			}
			got := cfg.Warnings()
			if len(got) != len(tc.want) {
				t.Fatalf("warnings %q, want %d matching %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("warning %d: %q does not name %s", i, got[i], w)
				}
			}
		})
	}
}
