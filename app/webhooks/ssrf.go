package webhooks

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// Guard decides which addresses deliveries may connect to. Endpoints are URLs strangers type in,
// so a delivery must never reach the server's own network: loopback, private, link-local (cloud
// metadata at 169.254.169.254), CGNAT, multicast and reserved addresses are refused, in IPv4,
// IPv6 and the IPv6 forms that embed an IPv4 address. The check runs on the address being
// dialled (Control), after name resolution, so a name that resolves (or rebinds) to such an
// address is refused as well. AllowLoopback (WEBHOOK_ALLOW_INSECURE) admits loopback only, for
// development and tests.
type Guard struct {
	AllowLoopback bool
}

// ErrAddressNotAllowed is the reason a delivery refused to connect.
var ErrAddressNotAllowed = errors.New("address not allowed")

var blocked = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8",       // "this network"
		"10.0.0.0/8",      // private
		"100.64.0.0/10",   // carrier-grade NAT (also Alibaba's metadata 100.100.100.200)
		"127.0.0.0/8",     // loopback
		"169.254.0.0/16",  // link-local, cloud metadata
		"172.16.0.0/12",   // private
		"192.0.0.0/24",    // IETF protocol assignments
		"192.0.2.0/24",    // documentation
		"192.88.99.0/24",  // 6to4 relay anycast
		"192.168.0.0/16",  // private
		"198.18.0.0/15",   // benchmarking
		"198.51.100.0/24", // documentation
		"203.0.113.0/24",  // documentation
		"224.0.0.0/4",     // multicast
		"240.0.0.0/4",     // reserved, broadcast
		"::/128",          // unspecified
		"::1/128",         // loopback
		"::/96",           // IPv4-compatible (deprecated)
		"::ffff:0:0/96",   // IPv4-mapped: not globally reachable (IANA), whatever IPv4 it carries
		"::ffff:0:0:0/96", // IPv4-translated (RFC 2765, SIIT)
		"100::/64",        // discard
		"2001::/32",       // Teredo
		"2001:2::/48",     // benchmarking
		"2001:db8::/32",   // documentation
		"3fff::/20",       // documentation (RFC 9637)
		"5f00::/16",       // SRv6 SIDs (RFC 9602), not globally reachable
		"fc00::/7",        // unique local (fd00::/8; AWS metadata fd00:ec2::254)
		"fe80::/10",       // link-local
		"fec0::/10",       // site-local (deprecated)
		"ff00::/8",        // multicast
		"64:ff9b:1::/48",  // local-use NAT64
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// embedded returns the IPv4 address an IPv6 address carries (IPv4-mapped, NAT64 64:ff9b::/96,
// 6to4 2002::/16), so that the IPv4 rules apply to it too.
func embedded(a netip.Addr) (netip.Addr, bool) {
	if a.Is4In6() {
		return a.Unmap(), true
	}
	b := a.As16()
	if netip.MustParsePrefix("64:ff9b::/96").Contains(a) {
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), true
	}
	if netip.MustParsePrefix("2002::/16").Contains(a) {
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), true
	}
	return netip.Addr{}, false
}

// CheckAddr refuses an address deliveries must not reach: one in a refused range, or an IPv6
// address whose embedded IPv4 address is in one. AllowLoopback admits loopback in either form.
func (g Guard) CheckAddr(a netip.Addr) error {
	a = a.WithZone("")
	v4, hasV4 := embedded(a)
	if g.AllowLoopback && (a.IsLoopback() || hasV4 && v4.IsLoopback()) {
		return nil
	}
	for _, p := range blocked {
		if p.Contains(a) {
			return fmt.Errorf("%w: %s is in %s", ErrAddressNotAllowed, a, p)
		}
		if hasV4 && p.Contains(v4) {
			return fmt.Errorf("%w: %s (%s) is in %s", ErrAddressNotAllowed, a, v4, p)
		}
	}
	return nil
}

// control is the dialer's Control hook: it sees the resolved address of every connection
// attempt, so DNS cannot hand out a refused address behind the URL check's back.
func (g Guard) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrAddressNotAllowed, address)
	}
	return g.CheckAddr(ap.Addr())
}

// HTTPClient returns the client deliveries use: the Guard on every dial, no proxy (a proxy
// would dial for us, unguarded), no redirects (a 3xx is a failed delivery, as Standard Webhooks
// says), and timeout for the whole exchange.
func (g Guard) HTTPClient(timeout time.Duration) *http.Client {
	d := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second, Control: g.control}
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           d.DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          100,
			MaxIdleConnsPerHost:   8,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   timeout,
			ResponseHeaderTimeout: timeout,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// urlProblem is why an endpoint URL is refused: a field error code and its detail.
type urlProblem struct{ code, detail string }

// CheckURL validates an endpoint URL when it is registered: absolute https (http only to
// loopback with AllowLoopback), no user info or fragment, a DNS name or an IP literal outside
// the refused ranges. Numeric host forms that are not plain dotted quads (2130706433, 0177.0.0.1,
// 0x7f.1) are refused outright: resolvers disagree on what they mean. A name is not resolved
// here (it may change); the dial-time Guard catches names that resolve to refused addresses.
func (g Guard) CheckURL(raw string) *urlProblem {
	if len(raw) > 2048 {
		return &urlProblem{"too_long", "must be at most 2048 characters"}
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "" {
		return &urlProblem{"invalid_url", "must be an absolute https URL"}
	}
	if strings.ContainsAny(raw, " \t\r\n\\") {
		return &urlProblem{"invalid_url", "must not contain white space or backslashes"}
	}
	if u.User != nil {
		return &urlProblem{"url_credentials_not_allowed", "must not carry user info; deliveries are signed instead"}
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return &urlProblem{"invalid_url", "must not have a fragment"}
	}
	host := strings.ToLower(u.Hostname())
	loopback := host == "localhost"
	if a, err := netip.ParseAddr(host); err == nil {
		if err := g.CheckAddr(a); err != nil {
			return &urlProblem{"url_not_allowed", "must not point to a private, loopback, link-local or reserved address"}
		}
		loopback = a.WithZone("").IsLoopback() || a.Is4In6() && a.Unmap().IsLoopback()
	} else if looksNumeric(host) {
		return &urlProblem{"invalid_host", "must be a DNS name or a dotted IPv4 / bracketed IPv6 address"}
	} else if !validHostname(host) {
		return &urlProblem{"invalid_host", "must be a DNS name or a dotted IPv4 / bracketed IPv6 address"}
	}
	if loopback && !g.AllowLoopback {
		return &urlProblem{"url_not_allowed", "must not point to a private, loopback, link-local or reserved address"}
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !(g.AllowLoopback && loopback) {
			return &urlProblem{"https_required", "must use https"}
		}
	default:
		return &urlProblem{"https_required", "must use https"}
	}
	return nil
}

// looksNumeric reports a host made of digits, dots and hex notation only: an IP in one of the
// forms inet_aton reads (decimal 2130706433, octal 0177.0.0.1, hex 0x7f.0.0.1, short 127.1).
func looksNumeric(host string) bool {
	last := host[strings.LastIndexByte(host, '.')+1:]
	if last == "" {
		return false
	}
	if strings.HasPrefix(last, "0x") {
		return true
	}
	for _, r := range last {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true // a DNS name's last label (the TLD) is never all digits
}

func validHostname(h string) bool {
	if h == "" || len(h) > 253 || strings.HasPrefix(h, ".") || strings.Contains(h, "..") {
		return false
	}
	for _, label := range strings.Split(strings.TrimSuffix(h, "."), ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	return true
}
