package documents

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"time"

	"github.com/rs/zerolog"
	"gocloud.dev/gcerrors"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/ent"
)

// streamTimeout bounds how long a download may take to send its content (10 MB to a slow
// client); the blob reader is closed then.
const streamTimeout = 15 * time.Minute

// Open opens a document's content for streaming to the client; the caller closes it (fasthttp
// does, after the response). Checked before the first byte: the blob exists (else 502
// content_missing) and has the stored size (else 502 content_corrupted); blob storage not
// answering is 503 unavailable. The sha256 is checked as the content passes: the reader holds
// back the last byte until it matches, so content that differs is never delivered whole (the
// response is cut short, the client sees fewer bytes than Content-Length, and it is logged).
//
// The reader outlives the request's context (the body is written after the handler returns),
// so it has its own, ended by Close or streamTimeout.
func (s *Service) Open(ctx context.Context, d *ent.Document) (io.ReadCloser, error) {
	log := zerolog.Ctx(ctx).With().Str("document_id", d.ID.String()).Str("blob_key", d.BlobKey).Logger()
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), streamTimeout)
	r, err := s.bucket.NewReader(rctx, d.BlobKey, nil)
	if err != nil {
		cancel()
		if gcerrors.Code(err) == gcerrors.NotFound {
			log.Error().Msg("document content missing")
			return nil, errs.Storage("content_missing", "the content of document %s is missing from storage", d.ID)
		}
		log.Warn().Err(err).Msg("document content unavailable")
		return nil, errs.Unavailable("unavailable", "blob storage does not answer; nothing was sent, retry the request")
	}
	if r.Size() != d.Size {
		_ = r.Close()
		cancel()
		log.Error().Int64("size_stored", d.Size).Int64("size_read", r.Size()).Msg("document content corrupted")
		return nil, errs.Storage("content_corrupted", "the stored content of document %s does not match its size", d.ID)
	}
	return &verified{r: r, close: func() { _ = r.Close(); cancel() }, h: sha256.New(), left: d.Size, want: d.Sha256, log: log}, nil
}

// verified passes on the content of a blob of known size and sha256, holding back its last byte
// until the whole content was read and hashed: when it differs, Read fails instead.
type verified struct {
	r     io.Reader
	close func()
	h     hash.Hash
	left  int64 // bytes not passed on yet
	want  string
	log   zerolog.Logger
	err   error
}

func (v *verified) Read(p []byte) (int, error) {
	switch {
	case v.err != nil:
		return 0, v.err
	case v.left == 0:
		return 0, io.EOF
	case len(p) == 0:
		return 0, nil
	case v.left > 1:
		p = p[:min(int64(len(p)), v.left-1)]
		n, err := v.r.Read(p)
		v.h.Write(p[:n])
		v.left -= int64(n)
		switch {
		case errors.Is(err, io.EOF):
			return n, v.fail(fmt.Errorf("%d bytes fewer than stored", v.left))
		case err != nil:
			return n, v.fail(err)
		}
		return n, nil
	}
	// The last byte: read it and the end of the blob, compare, only then pass it on.
	var last [2]byte
	n, err := io.ReadFull(v.r, last[:])
	switch {
	case n == 2:
		return 0, v.fail(errors.New("more bytes than stored"))
	case n == 0:
		return 0, v.fail(fmt.Errorf("a byte fewer than stored: %w", err))
	case !errors.Is(err, io.ErrUnexpectedEOF):
		return 0, v.fail(err)
	}
	v.h.Write(last[:1])
	if got := hex.EncodeToString(v.h.Sum(nil)); got != v.want {
		v.log.Error().Str("sha256_stored", v.want).Str("sha256_read", got).
			Msg("document content corrupted: download cut short before its last byte")
		v.err = errors.New("document content does not match its sha256")
		return 0, v.err
	}
	p[0] = last[0]
	v.left = 0
	return 1, nil
}

// fail ends the stream after a read error of blob storage.
func (v *verified) fail(err error) error {
	v.log.Error().Err(err).Msg("document content: reading blob storage failed, download cut short")
	v.err = fmt.Errorf("read document content: %w", err)
	return v.err
}

// Close releases the blob reader.
func (v *verified) Close() error {
	if v.close != nil {
		v.close()
		v.close = nil
	}
	return nil
}
