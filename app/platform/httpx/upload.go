package httpx

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
)

// Upload is what ReadUpload read of a multipart/form-data body: the form fields, how many file
// parts named "file" came (the first was stored), its file name (at most 255 characters) and
// what store made of it.
type Upload[T any] struct {
	Values   map[string][]string
	Files    int
	Filename string
	Stored   T
}

// uploadIdle is how long an upload may send nothing before the server gives up on it;
// uploadMaxField bounds each form field other than the file.
const (
	uploadIdle     = 60 * time.Second
	uploadMaxField = 4 << 10
)

// ReadUpload reads a multipart/form-data body as a stream (BodyReader), never holding it whole:
// the first part named "file" goes to store as it arrives, whether the other fields come before
// or after it; other fields are kept (at most 4 KiB each). A body that is not multipart is 415,
// a malformed one 400, one over limit 413 by tooLarge; on every such refusal (and a field too
// long) the stored file is discarded first. The caller checks the fields and discards the file
// when it refuses them. The one upload recipe of POST /portfolio-transfers and POST
// /commission-statements.
func ReadUpload[T any](c *fiber.Ctx, limit int64, tooLarge func() error, store func(io.Reader) (T, error),
	discard func(T)) (Upload[T], error) {
	up := Upload[T]{Values: map[string][]string{}}
	mt, params, err := mime.ParseMediaType(c.Get(fiber.HeaderContentType))
	if err != nil || mt != fiber.MIMEMultipartForm {
		return up, fiber.NewError(fiber.StatusUnsupportedMediaType, "send the file as multipart/form-data")
	}
	if params["boundary"] == "" {
		return up, errs.BadRequest("malformed_multipart", "the body is not valid multipart/form-data")
	}
	if int64(c.Request().Header.ContentLength()) > limit {
		return up, tooLarge()
	}
	stored := false
	// fail answers a body that could not be read: over the limit, cut short or not multipart.
	fail := func(err error) (Upload[T], error) {
		if stored {
			discard(up.Stored)
		}
		if errors.Is(err, ErrBodyTooLarge) {
			return up, tooLarge()
		}
		return up, errs.BadRequest("malformed_multipart", "the body is not valid multipart/form-data")
	}
	mr := multipart.NewReader(BodyReader(c, limit, uploadIdle), params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fail(err)
		}
		switch field := p.FormName(); {
		case field == "file" && p.FileName() != "" && up.Files == 0:
			up.Files++
			up.Filename = strings.Clone(p.FileName())
			if utf8.RuneCountInString(up.Filename) > 255 {
				up.Filename = string([]rune(up.Filename)[:255])
			}
			body := &readErr{r: p}
			if up.Stored, err = store(body); err != nil {
				if body.err != nil {
					return fail(body.err)
				}
				return up, err // the storage's
			}
			stored = true
		case field == "file" && p.FileName() != "":
			up.Files++ // the caller refuses it; NextPart skips its content
		default:
			b, err := io.ReadAll(io.LimitReader(p, uploadMaxField+1))
			if err != nil {
				return fail(err)
			}
			if len(b) > uploadMaxField {
				if stored {
					discard(up.Stored)
				}
				return up, errs.InvalidField(field, "invalid_length", fmt.Sprintf("must have at most %d bytes", uploadMaxField))
			}
			up.Values[field] = append(up.Values[field], string(b))
		}
	}
	return up, nil
}

// readErr remembers the error of reading the body, told apart from the storage's.
type readErr struct {
	r   io.Reader
	err error
}

func (r *readErr) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}
