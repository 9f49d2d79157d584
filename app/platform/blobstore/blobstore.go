// Package blobstore opens the blob storage behind gocloud.dev/blob that holds file contents
// (portfolio files, documents): a directory (file://, the default under .data/) or any
// S3-compatible store (s3://bucket?region=…&endpoint=…) by BLOB_URL. Keys are chosen by the
// server, never taken from a caller.
package blobstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/google/uuid"
	"github.com/rs/zerolog"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob" // file:// URLs
	_ "gocloud.dev/blob/s3blob"   // s3:// URLs (AWS and S3-compatible stores)
)

// DefaultURL is the bucket used when BLOB_URL is unset: .data/blobs below the working
// directory.
func DefaultURL() (string, error) {
	dir, err := filepath.Abs(filepath.Join(".data", "blobs"))
	if err != nil {
		return "", err
	}
	return FileURL(dir), nil
}

// FileURL is the bucket URL of a local directory, created when missing.
func FileURL(dir string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir), RawQuery: "create_dir=true&no_tmp_dir=true"}).String()
}

// Open opens the bucket at rawURL. A file:// directory is created when missing.
func Open(ctx context.Context, rawURL string) (*blob.Bucket, error) {
	if p, ok := strings.CutPrefix(rawURL, "file://"); ok {
		dir, _, _ := strings.Cut(p, "?")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("blob directory: %w", err)
		}
	}
	b, err := blob.OpenBucket(ctx, rawURL)
	if err != nil {
		return nil, fmt.Errorf("open blob storage: %w", err)
	}
	return b, nil
}

// NewKey returns an unguessable key for a blob of company under prefix ("portfolio",
// "documents"): company id, a time-ordered id and 128 random bits.
func NewKey(prefix string, company uuid.UUID) string {
	var r [16]byte
	_, _ = rand.Read(r[:])
	return prefix + "/" + company.String() + "/" + uuid.Must(uuid.NewV7()).String() + "-" + hex.EncodeToString(r[:])
}

// WriteFailed is the answer to blob storage failing a write (an S3 5xx or timeout, a full or
// broken disk): 503 unavailable with Retry-After, never a 500, since nothing was stored and
// the same request may succeed in a moment. The cause goes to the log, not to the client.
func WriteFailed(ctx context.Context, what string, err error) error {
	zerolog.Ctx(ctx).Warn().Err(err).Str("blob", what).Msg("blob storage write failed")
	return errs.Unavailable("unavailable", "blob storage did not take the %s; nothing was stored, retry the request", what)
}
