package webhooks

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Delivery headers: Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature) and the
// spec's Service-Signature, which carries the same value as webhook-signature.
const (
	HeaderID               = "webhook-id"
	HeaderTimestamp        = "webhook-timestamp"
	HeaderSignature        = "webhook-signature"
	HeaderServiceSignature = "Service-Signature"
	userAgent              = "BrokerDesk-Webhooks/1.0"
	// Timeout bounds one delivery attempt: connect, send, and the answer's headers and first KB.
	Timeout = 10 * time.Second
	// responseKeep is how much of an answer the delivery log keeps.
	responseKeep = 1024
)

// Sign returns the webhook-signature value for one delivery: a space-separated list of
// "v1,<base64 HMAC-SHA256 of id.timestamp.body>", one entry per key (two while a rotated-out
// secret still signs).
func Sign(keys [][]byte, id string, ts time.Time, body []byte) string {
	var b strings.Builder
	prefix := id + "." + strconv.FormatInt(ts.Unix(), 10) + "."
	for i, k := range keys {
		mac := hmac.New(sha256.New, k)
		mac.Write([]byte(prefix))
		mac.Write(body)
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("v1,")
		b.WriteString(base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	}
	return b.String()
}

// Result is what one delivery attempt got.
type Result struct {
	HTTPStatus int    // 0 when no answer arrived
	Body       string // the first KB of the answer (valid UTF-8, no NUL)
	Duration   time.Duration
	Err        string // why the attempt failed before an answer, or ""
	At         time.Time
}

// OK reports a 2xx answer: the only success.
func (r Result) OK() bool { return r.HTTPStatus >= 200 && r.HTTPStatus < 300 }

// Gone reports 410 Gone: the receiver asks us to stop (Standard Webhooks); the endpoint is
// disabled.
func (r Result) Gone() bool { return r.HTTPStatus == http.StatusGone }

// Sender makes delivery attempts.
type Sender struct {
	client *http.Client
	now    func() time.Time
}

// NewSender sends with client (Guard.HTTPClient) and stamps with now.
func NewSender(client *http.Client, now func() time.Time) *Sender {
	return &Sender{client: client, now: now}
}

// Send POSTs body to url, signed with keys, as event id. It never returns an error: every
// outcome is a Result for the delivery log.
func (s *Sender) Send(ctx context.Context, url, id string, body []byte, keys [][]byte) Result {
	ts := s.now()
	res := Result{At: ts}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		res.Err = "invalid url"
		return res
	}
	sig := Sign(keys, id, ts, body)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set(HeaderID, id)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set(HeaderSignature, sig)
	req.Header.Set(HeaderServiceSignature, sig)
	start := time.Now()
	resp, err := s.client.Do(req)
	if err != nil {
		res.Duration = time.Since(start)
		res.Err = describe(err)
		return res
	}
	defer resp.Body.Close()
	head, _ := io.ReadAll(io.LimitReader(resp.Body, responseKeep))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // let the connection be reused
	res.Duration = time.Since(start)
	res.HTTPStatus = resp.StatusCode
	res.Body = cleanText(head)
	if !res.OK() {
		res.Err = "answered " + strconv.Itoa(resp.StatusCode)
		if resp.StatusCode >= 300 && resp.StatusCode < 400 {
			res.Err += " (redirects are not followed)"
		}
	}
	return res
}

// describe turns a transport error into a short reason for the delivery log, without the URL
// (the log shows the endpoint already).
func describe(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, ErrAddressNotAllowed):
		msg := err.Error()
		if i := strings.Index(msg, ErrAddressNotAllowed.Error()); i >= 0 {
			msg = msg[i:]
		}
		return msg
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.As(err, &ne) && ne.Timeout():
		return "timed out after " + Timeout.String()
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, "\": "); i >= 0 { // *url.Error: `Post "url": reason`
		msg = msg[i+3:]
	}
	if len(msg) > 500 {
		msg = msg[:500]
	}
	return cleanText([]byte(msg))
}

// cleanText makes bytes storable as text: valid UTF-8 and no NUL (PostgreSQL refuses it).
func cleanText(b []byte) string {
	s := string(b)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	s = strings.ReplaceAll(s, "\x00", "")
	for len(s) > responseKeep { // the replacement character can grow the text past 1 KB
		_, n := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-n]
	}
	return s
}
