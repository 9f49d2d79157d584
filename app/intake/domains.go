package intake

import (
	"net/url"
	"strings"
	"unicode"
)

// A publishable key's allowed domains (lower-case host names, set by the operator) decide two
// things: where _redirect may send the browser, and which pages may post with the key. A host is
// allowed when it is one of the domains or a subdomain of one (www.example.com for example.com);
// the port does not matter, the scheme must be http or https.

// hostAllowed reports whether host (lower-case, without port) is one of domains or below one.
func hostAllowed(host string, domains []string) bool {
	if host == "" {
		return false
	}
	for _, d := range domains {
		if d != "" && (host == d || strings.HasSuffix(host, "."+d)) {
			return true
		}
	}
	return false
}

// redirectURL parses a _redirect target and returns it when it is an absolute http(s) URL
// without user info, whose host is ASCII (no look-alike Unicode hosts) and on one of domains.
// Relative and scheme-relative targets (//evil.example), other schemes, backslashes, white space
// and control characters are refused. The URL returned is the parsed one, serialised again.
func redirectURL(raw string, domains []string) (string, bool) {
	if raw == "" || len(raw) > MaxRedirectLen {
		return "", false
	}
	if strings.IndexFunc(raw, func(r rune) bool { return r == '\\' || unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return "", false
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Opaque != "" || u.User != nil || u.Host == "" {
		return "", false
	}
	host := u.Hostname()
	for i := 0; i < len(host); i++ {
		if host[i] >= 0x80 {
			return "", false
		}
	}
	if !hostAllowed(strings.ToLower(host), domains) {
		return "", false
	}
	return u.String(), true
}

func redirectAllowed(raw string, domains []string) bool {
	_, ok := redirectURL(raw, domains)
	return ok
}

// originAllowed reports whether a browser's Origin header may post with a key of domains. A
// key without domains accepts every origin; a request without Origin (server to server) always
// passes. An opaque origin ("null": sandboxed frames, file: pages) names no host and is
// refused for a key with domains.
func originAllowed(origin string, domains []string) bool {
	if len(domains) == 0 || origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || u.Host == "" ||
		(u.Path != "" && u.Path != "/") {
		return false
	}
	return hostAllowed(strings.ToLower(u.Hostname()), domains)
}
