// Package mail is the e-mail machinery below the e-mail area, without HTTP or database: MIME
// compose and parse (emersion/go-message), HTML sanitising (bluemonday), an SMTP client
// (emersion/go-smtp) and an IMAP client (emersion/go-imap/v2).
package mail

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Address is one address of a header.
type Address struct {
	Email string
	Name  string
}

// String is the address as a header writes it (RFC 2047 encoded name when needed).
func (a Address) String() string {
	return formatAddress(a)
}

// Server names a mail server and its credentials. URL is smtp://host:port (STARTTLS when the
// server offers it; required unless the host is loopback), smtps://host:port (implicit TLS),
// imap://host:port (STARTTLS likewise) or imaps://host:port.
type Server struct {
	URL      string
	Username string
	Password string
}

// Config is how clients reach servers.
type Config struct {
	// TLS is the base TLS configuration (RootCAs for a test server's certificate); nil: system roots.
	TLS *tls.Config
	// Timeout bounds dialling and each command (default 30 s).
	Timeout time.Duration
	// LocalName is the name the SMTP client greets with (EHLO); default "localhost".
	LocalName string
	// Dial opens the TCP connection to host:port; nil: a net.Dialer with Timeout. Whether the
	// server is loopback (plaintext allowed) is decided by the URL's host, never by where Dial
	// connects: tests reach a "remote" name on a local listener with it.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// dial opens the connection to addr (host:port) as c says.
func (c Config) dial(ctx context.Context, addr string) (net.Conn, error) {
	if c.Dial != nil {
		return c.Dial(ctx, "tcp", addr)
	}
	d := net.Dialer{Timeout: c.Timeout}
	return d.DialContext(ctx, "tcp", addr)
}

// DefaultTimeout is Config.Timeout when it is zero.
const DefaultTimeout = 30 * time.Second

// WithDefaults fills the zero fields of c.
func (c Config) WithDefaults() Config {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.LocalName == "" {
		c.LocalName = "localhost"
	}
	return c
}

// tlsConfig is the TLS configuration for host: a copy of the base with ServerName set.
func (c Config) tlsConfig(host string) *tls.Config {
	var t *tls.Config
	if c.TLS != nil {
		t = c.TLS.Clone()
	} else {
		t = &tls.Config{}
	}
	if t.ServerName == "" {
		t.ServerName = host
	}
	if t.MinVersion == 0 {
		t.MinVersion = tls.VersionTLS12
	}
	return t
}

// ErrAuth is wrapped by every error that means the server refused the credentials (SMTP 535 and
// other refused AUTH, IMAP LOGIN answered NO): the caller pauses the mailbox instead of retrying.
var ErrAuth = errors.New("mail: the server refused the login")

// ErrInsecure is wrapped when a connection to a non-loopback host would go without TLS.
var ErrInsecure = errors.New("mail: refusing a plaintext connection to a non-loopback host")

// endpoint is a parsed server URL.
type endpoint struct {
	scheme string // smtp, smtps, imap, imaps
	host   string // without port
	addr   string // host:port
}

// implicitTLS reports whether the connection starts with TLS (smtps, imaps).
func (e endpoint) implicitTLS() bool { return strings.HasSuffix(e.scheme, "s") }

// parseEndpoint reads a server URL of one of the schemes, filling the default port.
func parseEndpoint(raw string, schemes map[string]int) (endpoint, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return endpoint{}, fmt.Errorf("mail: server URL %q: %w", raw, err)
	}
	scheme := strings.ToLower(u.Scheme)
	port, ok := schemes[scheme]
	if !ok {
		names := make([]string, 0, len(schemes))
		for s := range schemes {
			names = append(names, s+"://")
		}
		return endpoint{}, fmt.Errorf("mail: server URL %q: the scheme must be one of %s", raw, strings.Join(sortedStrings(names), ", "))
	}
	host := u.Hostname()
	if host == "" {
		return endpoint{}, fmt.Errorf("mail: server URL %q has no host", raw)
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 || n > 65535 {
			return endpoint{}, fmt.Errorf("mail: server URL %q: bad port", raw)
		}
		port = n
	}
	return endpoint{scheme: scheme, host: host, addr: net.JoinHostPort(host, strconv.Itoa(port))}, nil
}

func sortedStrings(s []string) []string {
	slices.Sort(s)
	return s
}

// IsLoopback reports whether host (a name or an IP, without port) is this machine's loopback:
// 127.0.0.0/8, ::1 or "localhost". Only there may a connection go without TLS.
func IsLoopback(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// plaintextAllowed is the one decision whether a connection to host may stay unencrypted
// (the server offers no STARTTLS): only on loopback, so a password never crosses a network in
// the clear and a man in the middle cannot strip STARTTLS from the EHLO answer.
func plaintextAllowed(host string) bool { return IsLoopback(host) }
