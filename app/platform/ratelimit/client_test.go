package ratelimit

import (
	"io"
	"net/http/httptest"
	"testing"

	"github.com/gofiber/fiber/v2"
)

func TestClients_Bucket(t *testing.T) {
	trusted, err := ParseTrustedProxies(" 0.0.0.0/32, 10.0.0.0/8 ,::1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseTrustedProxies("10.0.0.0/33"); err == nil {
		t.Error("a bad CIDR was accepted")
	}
	for _, tc := range []struct {
		name    string
		clients Clients
		xff     string
		want    string
	}{
		{"no proxies: the peer, whatever the header says", Clients{}, "198.51.100.1", "0.0.0.0"},
		{"trusted peer: the header's client", trusted, "198.51.100.1", "198.51.100.1"},
		{"right-most untrusted hop", trusted, "203.0.113.9, 198.51.100.1, 10.1.2.3", "198.51.100.1"},
		{"IPv6 by /64", trusted, "2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"},
		{"IPv4-mapped IPv6 is IPv4", trusted, "::ffff:198.51.100.7", "198.51.100.7"},
		{"malformed hop: the peer", trusted, "198.51.100.1, garbage", "0.0.0.0"},
		{"only trusted hops: the peer", trusted, "10.0.0.1", "0.0.0.0"},
	} {
		app := fiber.New()
		app.Get("/", func(c *fiber.Ctx) error { return c.SendString(tc.clients.Bucket(c)) })
		req := httptest.NewRequest("GET", "/", nil)
		req.Header.Set("X-Forwarded-For", tc.xff)
		resp, err := app.Test(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		if string(got) != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, got, tc.want)
		}
	}
}
