package httpx

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/paging"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Page sizes and cursor lifetime (spec: Limits).
const (
	DefaultLimit = 50
	MaxLimit     = 200
	CursorTTL    = 24 * time.Hour
)

// Pager seals and opens cursors. Cursors are AES-GCM sealed with a key derived from the server
// secret: opaque to clients, tamper-proof, bound to one list with its filters and one company,
// and valid for CursorTTL. Every paged list uses it.
type Pager struct {
	aead cipher.AEAD
	now  func() time.Time
}

// NewPager derives the cursor key from secret. now is the clock (time.Now outside tests).
func NewPager(secret []byte, now func() time.Time) *Pager {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte("brokerdesk cursor v1"))
	block, err := aes.NewCipher(mac.Sum(nil))
	if err != nil {
		panic(err) // a 32-byte key never fails
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	return &Pager{aead: aead, now: now}
}

// PageQuery is one page request as the pipeline holds it: the page a service is asked for
// (paging.Page: how many rows, and the sort key of the last row already seen) plus what
// WritePage needs to seal the next cursor.
type PageQuery struct {
	paging.Page
	pager   *Pager
	binding string
}

type cursor struct {
	Binding string   `json:"b"`
	Key     []string `json:"k,omitempty"`
	Expires int64    `json:"e"`
}

// Parse reads the query parameters cursor and limit of list, a name for the list and its
// filters (e.g. "users?status=active"): a cursor is valid only for the same list, filters and
// company.
func (p *Pager) Parse(c *fiber.Ctx, list string) (PageQuery, error) {
	q := PageQuery{Page: paging.Page{Limit: DefaultLimit}, pager: p, binding: p.bind(c, list)}
	var v errs.Invalid
	if s := c.Query("limit"); s != "" {
		n, err := strconv.Atoi(s)
		switch {
		case err != nil:
			v.Add("limit", "invalid_integer", "must be an integer from 1 to 200")
		case n < 1 || n > MaxLimit:
			v.Add("limit", "out_of_range", "must be from 1 to 200")
		default:
			q.Limit = n
		}
	}
	if s := c.Query("cursor"); s != "" {
		cur, code, detail := p.open(s)
		switch {
		case code != "":
			v.Add("cursor", code, detail)
		case cur.Binding != q.binding:
			v.Add("cursor", "cursor_mismatch", "belongs to another list, other filters or another company; start again without a cursor")
		case p.now().Unix() > cur.Expires:
			v.Add("cursor", "cursor_expired", "has expired; start again without a cursor")
		default:
			q.After = cur.Key
		}
	}
	return q, v.Err()
}

// HasCursor reports whether the request continues a walk.
func (q PageQuery) HasCursor() bool { return q.After != nil }

func (p *Pager) bind(c *fiber.Ctx, list string) string {
	company := ""
	if id, ok := tenancy.CompanyID(c.UserContext()); ok {
		company = id.String()
	}
	sum := sha256.Sum256([]byte(company + "\x00" + list))
	return base64.RawURLEncoding.EncodeToString(sum[:12])
}

func (p *Pager) seal(cur cursor) string {
	plain, _ := json.Marshal(cur)
	nonce := make([]byte, p.aead.NonceSize())
	_, _ = rand.Read(nonce)
	return base64.RawURLEncoding.EncodeToString(p.aead.Seal(nonce, nonce, plain, nil))
}

func (p *Pager) open(s string) (cursor, string, string) {
	var cur cursor
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(raw) < p.aead.NonceSize() {
		return cur, "invalid_cursor", "is not a cursor this API issued"
	}
	n := p.aead.NonceSize()
	plain, err := p.aead.Open(nil, raw[:n], raw[n:], nil)
	if err != nil || json.Unmarshal(plain, &cur) != nil {
		return cur, "invalid_cursor", "is not a cursor this API issued"
	}
	if cur.Key == nil {
		cur.Key = []string{} // a cursor from an empty first page continues from the start
	}
	return cur, "", ""
}

// Pagination is the pagination object of a Page. NextCursor is always set: on the last page it
// points past the last row, so a client polling with it later sees only newer rows.
type Pagination struct {
	NextCursor string `json:"nextCursor"`
	HasMore    bool   `json:"hasMore"`
}

// PageBody is the spec's Page: {data, pagination}.
type PageBody[T any] struct {
	Data       []T        `json:"data"`
	Pagination Pagination `json:"pagination"`
}

// WritePage answers 200 with a Page of rows, which holds up to q.Limit+1 rows fetched in key
// order; key gives a row's sort key, which the next cursor carries (a keyset's Key); view
// renders a row and may fail (Plain adapts one that cannot).
func WritePage[R any, V any](c *fiber.Ctx, q PageQuery, rows []R, key func(R) []string, view func(R) (V, error)) error {
	more := len(rows) > q.Limit
	if more {
		rows = rows[:q.Limit]
	}
	next := q.After
	if len(rows) > 0 {
		next = key(rows[len(rows)-1])
	}
	if next == nil {
		next = []string{}
	}
	data := make([]V, len(rows))
	for i, r := range rows {
		v, err := view(r)
		if err != nil {
			return err
		}
		data[i] = v
	}
	exp := q.pager.now().Add(CursorTTL).Unix()
	return c.JSON(PageBody[V]{Data: data, Pagination: Pagination{
		NextCursor: q.pager.seal(cursor{Binding: q.binding, Key: next, Expires: exp}),
		HasMore:    more,
	}})
}
