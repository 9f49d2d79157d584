package webhooks

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestGuard_CheckURL(t *testing.T) {
	strict, dev := Guard{}, Guard{AllowLoopback: true}
	for _, tc := range []struct {
		url        string
		strict     string // "" = accepted
		devAllowed string // with WEBHOOK_ALLOW_INSECURE
	}{
		{"https://hooks.example.com/x?y=1", "", ""},
		{"https://93.184.216.34/hook", "", ""},
		{"https://[2606:2800:220:1::1]/hook", "", ""},
		{"http://hooks.example.com", "https_required", "https_required"},
		{"http://127.0.0.1:8080/hook", "url_not_allowed", ""},
		{"https://127.0.0.1/hook", "url_not_allowed", ""},
		{"http://localhost:9000", "url_not_allowed", ""},
		{"http://[::1]:9000/", "url_not_allowed", ""},
		{"https://[::ffff:127.0.0.1]/", "url_not_allowed", ""},
		{"https://10.0.0.1", "url_not_allowed", "url_not_allowed"},
		{"https://172.16.5.4", "url_not_allowed", "url_not_allowed"},
		{"https://192.168.1.1", "url_not_allowed", "url_not_allowed"},
		{"https://169.254.169.254/latest/meta-data/", "url_not_allowed", "url_not_allowed"},
		{"https://100.64.0.1", "url_not_allowed", "url_not_allowed"},
		{"https://0.0.0.0", "url_not_allowed", "url_not_allowed"},
		{"https://[fd00::1]/", "url_not_allowed", "url_not_allowed"},
		{"https://[fd00:ec2::254]/", "url_not_allowed", "url_not_allowed"},
		{"https://[fe80::1]/", "url_not_allowed", "url_not_allowed"},
		{"https://[::ffff:10.0.0.1]/", "url_not_allowed", "url_not_allowed"},
		{"https://[64:ff9b::a9fe:a9fe]/", "url_not_allowed", "url_not_allowed"}, // NAT64 of 169.254.169.254
		{"https://[2002:7f00:1::]/", "url_not_allowed", ""},                     // 6to4 of 127.0.0.1
		// IPv4-mapped (::ffff:0:0/96) is not globally reachable (IANA special-purpose registry),
		// whatever the IPv4 address it carries; 3fff::/20 is documentation (RFC 9637).
		{"https://[::ffff:93.184.216.34]/", "url_not_allowed", "url_not_allowed"},
		{"https://[3fff::1]/", "url_not_allowed", "url_not_allowed"},
		{"https://[3fff:fff:ffff::1]/", "url_not_allowed", "url_not_allowed"},
		{"https://[3fff:1000::1]/", "", ""},                     // just outside 3fff::/20
		{"https://2130706433/", "invalid_host", "invalid_host"}, // decimal 127.0.0.1
		{"https://0177.0.0.1/", "invalid_host", "invalid_host"}, // octal
		{"https://0x7f.0.0.1/", "invalid_host", "invalid_host"}, // hex
		{"https://127.1/", "invalid_host", "invalid_host"},      // short form
		{"https://017700000001/", "invalid_host", "invalid_host"},
		{"https://user:pw@hooks.example.com", "url_credentials_not_allowed", "url_credentials_not_allowed"},
		{"https://hooks.example.com/#frag", "invalid_url", "invalid_url"},
		{"hooks.example.com/x", "invalid_url", "invalid_url"},
		{"javascript:alert(1)", "invalid_url", "invalid_url"},
		{"ftp://hooks.example.com", "https_required", "https_required"},
		{"https://hooks.exa mple.com", "invalid_url", "invalid_url"},
		{"https://" + strings.Repeat("a", 2050) + ".com", "too_long", "too_long"},
	} {
		for _, g := range []struct {
			guard Guard
			want  string
		}{{strict, tc.strict}, {dev, tc.devAllowed}} {
			got := ""
			if p := g.guard.CheckURL(tc.url); p != nil {
				got = p.code
			}
			if got != g.want {
				t.Errorf("CheckURL(%q) with loopback allowed=%v = %q, want %q", tc.url, g.guard.AllowLoopback, got, g.want)
			}
		}
	}
}

func TestGuard_CheckAddr(t *testing.T) {
	for _, tc := range []struct {
		addr    string
		allowed bool
	}{
		{"93.184.216.34", true}, {"2606:2800:220:1::1", true}, {"8.8.8.8", true},
		{"127.0.0.1", false}, {"127.8.9.10", false}, {"::1", false}, {"10.1.2.3", false}, {"172.31.255.255", false},
		{"192.168.0.1", false}, {"169.254.169.254", false}, {"100.100.100.200", false}, {"fd00::1", false},
		{"fd12:3456::1", false}, {"fe80::1%eth0", false}, {"::ffff:169.254.169.254", false}, {"224.0.0.1", false},
		{"255.255.255.255", false}, {"198.18.0.1", false}, {"::", false}, {"2001:db8::1", false},
		// the list lacked these: every IPv4-mapped address, IPv6 documentation (RFC 9637),
		// IPv4-translated (RFC 2765), IPv6 benchmarking, SRv6 SIDs (RFC 9602)
		{"::ffff:8.8.8.8", false}, {"::ffff:0:0", false}, {"::ffff:93.184.216.34", false},
		{"3fff::", false}, {"3fff:abc::1", false}, {"3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", false}, {"3fff:1000::", true},
		{"::ffff:0:808:808", false}, {"2001:2::1", false}, {"5f00::1", false},
	} {
		err := Guard{}.CheckAddr(netip.MustParseAddr(tc.addr))
		if (err == nil) != tc.allowed {
			t.Errorf("CheckAddr(%s) = %v, want allowed=%v", tc.addr, err, tc.allowed)
		}
	}
}

// TestGuard_DialRefusesResolvedLoopback: the check runs on the address being dialled, so a name
// that resolves to loopback ("localhost" here; a rebinding DNS name alike) is refused at connect
// time, whatever the URL check said; WEBHOOK_ALLOW_INSECURE admits it.
func TestGuard_DialRefusesResolvedLoopback(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(204) }))
	defer srv.Close()
	port := srv.URL[strings.LastIndexByte(srv.URL, ':'):]
	for _, host := range []string{"localhost", "127.0.0.1", "[::1]"} {
		_, err := Guard{}.HTTPClient(2 * time.Second).Get("http://" + host + port)
		if !errors.Is(err, ErrAddressNotAllowed) {
			t.Errorf("%s: err %v, want ErrAddressNotAllowed", host, err)
		}
	}
	resp, err := Guard{AllowLoopback: true}.HTTPClient(2 * time.Second).Get("http://localhost" + port)
	if err != nil {
		t.Fatalf("loopback allowed: %v", err)
	}
	resp.Body.Close()
}

// TestSender_NoRedirects: a 3xx is the answer, not followed.
func TestSender_NoRedirects(t *testing.T) {
	hit := false
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hit = true }))
	defer target.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL, http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	s := NewSender(Guard{AllowLoopback: true}.HTTPClient(2*time.Second), time.Now)
	res := s.Send(t.Context(), srv.URL, "id", []byte("{}"), [][]byte{[]byte("k")})
	if res.HTTPStatus != 307 || res.OK() || hit || !strings.Contains(res.Err, "redirects are not followed") {
		t.Errorf("redirect: %+v, followed=%v", res, hit)
	}
}

func TestCleanText(t *testing.T) {
	long := strings.Repeat("ä", 600) // 1200 bytes
	for _, tc := range []struct{ in, want string }{
		{"ok", "ok"}, {"a\x00b", "ab"}, {"a\xff\xfeb", "a\uFFFDb"},
	} {
		if got := cleanText([]byte(tc.in)); got != tc.want {
			t.Errorf("cleanText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := cleanText([]byte(long)); len(got) > responseKeep || !strings.HasPrefix(long, got) {
		t.Errorf("cleanText of 1200 bytes kept %d bytes", len(got))
	}
}
