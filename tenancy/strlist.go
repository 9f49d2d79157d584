package tenancy

import (
	"encoding/json"
	"slices"
	"sync"
)

// A credential's scopes, features and allowed domains arrive as JSON arrays of strings with
// every request, and the same few arrays come again and again (["*"], a client's granted
// scopes, a company's features): parsing them was 5% of GET /me's CPU. stringLists keeps the
// parsed form by its text. The slices are shared between requests, so nobody may modify a
// Principal's Scopes, Features or AllowedDomains (nothing does; append on a clipped slice copies).
var stringLists = struct {
	sync.RWMutex
	m map[string][]string
}{m: map[string][]string{}}

// maxStringLists bounds the cache; past it arrays are parsed each time.
const maxStringLists = 4096

// parseStrings parses raw, a JSON array of strings, into dst.
func parseStrings(raw []byte, dst *[]string) error {
	stringLists.RLock()
	v, ok := stringLists.m[string(raw)]
	stringLists.RUnlock()
	if ok {
		*dst = v
		return nil
	}
	var s []string
	if err := json.Unmarshal(raw, &s); err != nil {
		return err
	}
	s = slices.Clip(s)
	stringLists.Lock()
	if len(stringLists.m) < maxStringLists {
		stringLists.m[string(raw)] = s
	}
	stringLists.Unlock()
	*dst = s
	return nil
}
