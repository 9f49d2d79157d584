package mail

import "testing"

// TestPlaintextAllowed is the one decision whether a connection may go unencrypted: only
// loopback. It would catch a check that trusts a name merely starting with "127." or
// "localhost", or a private network address.
func TestPlaintextAllowed(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1":            true,
		"127.8.9.10":           true,
		"::1":                  true,
		"[::1]":                true,
		"localhost":            true,
		"LOCALHOST.":           true,
		"mail.localhost":       true,
		"10.0.0.1":             false,
		"192.168.1.2":          false,
		"0.0.0.0":              false,
		"::":                   false,
		"127.0.0.1.nip.io":     false,
		"localhost.example.de": false,
		"smtp.example.com":     false,
		"":                     false,
	} {
		if got := plaintextAllowed(host); got != want {
			t.Errorf("plaintextAllowed(%q) = %v, want %v", host, got, want)
		}
	}
}

// TestParseEndpoint: default ports per scheme and refusal of other schemes.
func TestParseEndpoint(t *testing.T) {
	for raw, want := range map[string]string{
		"smtp://mail.example.com":       "mail.example.com:587",
		"smtps://mail.example.com":      "mail.example.com:465",
		"SMTP://mail.example.com:25":    "mail.example.com:25",
		"smtp://[::1]:2525":             "[::1]:2525",
		"smtp://user@mail.example.com/": "mail.example.com:587",
	} {
		ep, err := parseEndpoint(raw, smtpSchemes)
		if err != nil || ep.addr != want {
			t.Errorf("%s: %v %q", raw, err, ep.addr)
		}
	}
	for _, raw := range []string{"http://x", "imap://x", "smtp://", "smtp://x:0", "smtp://x:99999", "mail.example.com:25"} {
		if _, err := parseEndpoint(raw, smtpSchemes); err == nil {
			t.Errorf("%s accepted", raw)
		}
	}
	if ep, err := parseEndpoint("imaps://imap.example.com", imapSchemes); err != nil || ep.addr != "imap.example.com:993" || !ep.implicitTLS() {
		t.Errorf("imaps: %v %+v", err, ep)
	}
}
