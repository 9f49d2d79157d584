package httpx

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
)

// MaxBody is the request body limit of every route but the streamed uploads (10 MiB).
const MaxBody = 10 << 20

const streamedLocal = "httpx.streamed"

// BodyLimit enforces the request body limits. The server streams request bodies (fiber's
// StreamRequestBody), which makes fasthttp's own limit (BodyLimit) a mere buffer size: any body
// reaches the handlers as a stream, and c.Body() would read it whole whatever its length. So
// this middleware, ahead of routing, reads every body into memory as before, up to limit:
// a larger Content-Length is refused at once (413) without reading the body, a chunked body
// as soon as it passes limit. Requests for which streamed says true (the portfolio upload)
// keep their stream, read by the handler through BodyReader with its own limit.
//
// A body not read to its end cannot be followed by another request on the connection
// (fasthttp does not drain it), so such answers close the connection.
func BodyLimit(limit int64, streamed func(c *fiber.Ctx) bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		req := c.Request()
		if !req.IsBodyStream() {
			// no body, a body fasthttp read whole already, or read already (a rerun)
			if err := decodeContent(c, limit); err != nil {
				return err
			}
			return c.Next()
		}
		if streamed(c) {
			c.Locals(streamedLocal, &bodyReader{c: c, r: req.BodyStream()})
			err := c.Next()
			if br, ok := c.Locals(streamedLocal).(*bodyReader); ok && !br.eof {
				c.Set(fiber.HeaderConnection, "close")
				linger(c, br)
			}
			return err
		}
		if req.Header.ContentLength() > int(limit) {
			c.Set(fiber.HeaderConnection, "close")
			return fiber.ErrRequestEntityTooLarge
		}
		// At most limit+1 bytes (a chunked body has no length to check first). A body cut short
		// is refused here, as fasthttp refused it before streaming (req.Body() would hand the
		// handler the error's text as the body).
		var buf bytes.Buffer
		if cl := req.Header.ContentLength(); cl > 0 {
			buf.Grow(cl + bytes.MinRead) // room to read EOF without growing
		}
		n, err := io.Copy(&buf, io.LimitReader(req.BodyStream(), limit+1))
		if err != nil {
			c.Set(fiber.HeaderConnection, "close")
			return fiber.NewError(fiber.StatusBadRequest, "the request body could not be read")
		}
		if n > limit {
			c.Set(fiber.HeaderConnection, "close")
			linger(c, req.BodyStream())
			return fiber.ErrRequestEntityTooLarge
		}
		req.SetBodyRaw(buf.Bytes())
		if err := decodeContent(c, limit); err != nil {
			return err
		}
		return c.Next()
	}
}

// decodeContent undoes the body's Content-Encoding once, here, within limit: Fiber's c.Body()
// would inflate a gzip, deflate or br body on every call with no bound, so a 20 KB body could
// become gigabytes in a handler after the limit had passed it (a decompression bomb). The
// decoded body replaces the raw one and the header goes, so nothing decodes it again. A body
// that decodes past limit is 413; codings other than gzip, deflate, br and identity are 415;
// data that does not decode is 400.
func decodeContent(c *fiber.Ctx, limit int64) error {
	req := c.Request()
	h := strings.ToLower(string(req.Header.Peek(fiber.HeaderContentEncoding)))
	if strings.TrimSpace(h) == "" {
		return nil
	}
	body := req.Body()
	codings := strings.Split(h, ",")
	for i := len(codings) - 1; i >= 0; i-- { // the last coding applied is undone first
		var r io.Reader
		var err error
		switch strings.TrimSpace(codings[i]) {
		case "identity":
			continue
		case "gzip", "x-gzip":
			r, err = gzip.NewReader(bytes.NewReader(body))
		case "deflate": // HTTP's deflate is the zlib format (RFC 9110 §8.4.1.2)
			r, err = zlib.NewReader(bytes.NewReader(body))
		case "br":
			r = brotli.NewReader(bytes.NewReader(body))
		default:
			return errs.Unsupported("unsupported_encoding", "Content-Encoding %q is not supported: send gzip, deflate, br or none", strings.TrimSpace(codings[i]))
		}
		var out bytes.Buffer
		if err == nil {
			_, err = io.Copy(&out, io.LimitReader(r, limit+1))
		}
		if err != nil {
			return errs.BadRequest("malformed_body", "the body does not decode as its Content-Encoding says")
		}
		if int64(out.Len()) > limit {
			return fiber.ErrRequestEntityTooLarge
		}
		body = out.Bytes()
	}
	req.SetBodyRaw(body)
	req.Header.Del(fiber.HeaderContentEncoding)
	return nil
}

// A refused body the client is still sending is read and dropped for up to lingerTime and
// lingerMax bytes before the answer: a connection closed with unread data is reset by the
// kernel, and a client still writing would see the reset instead of the 413 (servers' lingering
// close). Past either bound the connection closes regardless.
const (
	lingerMax  = 16 << 20
	lingerTime = 2 * time.Second
)

func linger(c *fiber.Ctx, r io.Reader) {
	if conn := c.Context().Conn(); conn != nil {
		_ = conn.SetReadDeadline(time.Now().Add(lingerTime))
	}
	_, _ = io.CopyN(io.Discard, r, lingerMax)
}

// Streamed tells whether the request's body is left to the handler as a stream (BodyLimit).
func Streamed(c *fiber.Ctx) bool {
	_, ok := c.Locals(streamedLocal).(*bodyReader)
	return ok
}

// ErrBodyTooLarge is returned by BodyReader's reader past its limit.
var ErrBodyTooLarge = errors.New("request body over its limit")

// BodyReader is the request body as a stream of at most limit bytes (then ErrBodyTooLarge), for
// a route that BodyLimit streams; other routes get their body from memory. Each read extends the
// connection's read deadline by idle, so a large upload is bounded by the time between two
// reads, not the server's ReadTimeout for the whole request.
func BodyReader(c *fiber.Ctx, limit int64, idle time.Duration) io.Reader {
	br, ok := c.Locals(streamedLocal).(*bodyReader)
	if !ok {
		return &limited{r: bytes.NewReader(c.Body()), left: limit}
	}
	br.idle = idle
	return &limited{r: br, left: limit}
}

type bodyReader struct {
	c    *fiber.Ctx
	r    io.Reader
	idle time.Duration
	eof  bool
}

func (b *bodyReader) Read(p []byte) (int, error) {
	if b.eof {
		return 0, io.EOF
	}
	if b.idle > 0 {
		if conn := b.c.Context().Conn(); conn != nil {
			_ = conn.SetReadDeadline(time.Now().Add(b.idle))
		}
	}
	n, err := b.r.Read(p)
	if err == io.EOF {
		b.eof = true
	}
	return n, err
}

// limited is io.LimitReader that tells a body over its limit from one that ends there.
type limited struct {
	r    io.Reader
	left int64
}

func (l *limited) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, ErrBodyTooLarge
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return n + int(l.left), ErrBodyTooLarge
	}
	return n, err
}
