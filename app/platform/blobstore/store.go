package blobstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"

	"github.com/google/uuid"
	"gocloud.dev/blob"

	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Stored is an uploaded file in blob storage that is not yet a row's (a portfolio transfer's,
// a commission statement's).
type Stored struct {
	Key    string
	Size   int64
	SHA256 string
}

// StorePinned is Store for the company the request or job of ctx is pinned to: an upload's
// file is always its own company's (tenancy.ErrNoCompany outside a pinned context).
func StorePinned(ctx context.Context, bucket *blob.Bucket, prefix, what string, r io.Reader) (Stored, error) {
	company, ok := tenancy.CompanyID(ctx)
	if !ok {
		return Stored{}, tenancy.ErrNoCompany
	}
	return Store(ctx, bucket, prefix, company, what, r)
}

// Store streams r into a new blob of company under prefix (NewKey), hashing it on the way. When
// reading r fails (the body ends early, passes its limit) the write is aborted and nothing stays
// behind: gocloud.dev/blob discards a writer whose context is cancelled before Close; that error
// is returned as it is. A failure of the storage itself is WriteFailed (503), named what.
func Store(ctx context.Context, bucket *blob.Bucket, prefix string, company uuid.UUID, what string, r io.Reader) (Stored, error) {
	key := NewKey(prefix, company)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := bucket.NewWriter(wctx, key, nil)
	if err != nil {
		return Stored{}, WriteFailed(ctx, what, err)
	}
	h := sha256.New()
	bw := &keepErr{w: w}
	size, err := io.Copy(io.MultiWriter(bw, h), r)
	if err != nil {
		cancel()
		_ = w.Close()
		if bw.err != nil { // the storage failed, not the client's body
			return Stored{}, WriteFailed(ctx, what, bw.err)
		}
		return Stored{}, err
	}
	if err := w.Close(); err != nil {
		return Stored{}, WriteFailed(ctx, what, err)
	}
	return Stored{Key: key, Size: size, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// Discard removes a stored file that did not become a row (the request was refused or failed);
// it runs even when ctx was cancelled.
func Discard(ctx context.Context, bucket *blob.Bucket, f Stored) {
	if f.Key != "" {
		_ = bucket.Delete(context.WithoutCancel(ctx), f.Key)
	}
}

// keepErr keeps the error of the blob writer (a storage failure, 503) apart from the body's.
type keepErr struct {
	w   io.Writer
	err error
}

func (b *keepErr) Write(p []byte) (int, error) {
	n, err := b.w.Write(p)
	if err != nil {
		b.err = err
	}
	return n, err
}
