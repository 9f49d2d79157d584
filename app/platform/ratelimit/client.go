package ratelimit

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// Clients tells the address a request comes from, for limits per sender. X-Forwarded-For is
// believed only when the peer is a trusted proxy (TRUSTED_PROXIES): then the client is the
// right-most address of the header that is not itself a trusted proxy. Anything else (no
// proxies configured, a peer outside them, a malformed header) uses the peer address, so a
// client cannot choose its own bucket by sending the header.
type Clients struct{ trusted []netip.Prefix }

// ParseTrustedProxies reads TRUSTED_PROXIES: comma-separated CIDRs or single addresses.
func ParseTrustedProxies(s string) (Clients, error) {
	var c Clients
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			a, aerr := netip.ParseAddr(f)
			if aerr != nil {
				return Clients{}, fmt.Errorf("%q is neither a CIDR nor an address", f)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		c.trusted = append(c.trusted, p.Masked())
	}
	return c, nil
}

func (c Clients) isTrusted(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range c.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Addr is the client address of the request.
func (c Clients) Addr(fc *fiber.Ctx) netip.Addr {
	peer, _ := netip.AddrFromSlice(fc.Context().RemoteIP())
	peer = peer.Unmap()
	if len(c.trusted) == 0 || !c.isTrusted(peer) {
		return peer
	}
	hops := strings.Split(fc.Get(fiber.HeaderXForwardedFor), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return peer
		}
		if !c.isTrusted(a) {
			return a.Unmap()
		}
	}
	return peer
}

// Bucket is the key of the request's sender: its IPv4 address, or the /64 of its IPv6 address
// (one subscriber usually holds a whole /64, so counting single IPv6 addresses would let it
// rotate through 2^64 buckets).
func (c Clients) Bucket(fc *fiber.Ctx) string {
	return AddrBucket(c.Addr(fc))
}

// AddrBucket is Bucket for an address.
func AddrBucket(a netip.Addr) string {
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}
