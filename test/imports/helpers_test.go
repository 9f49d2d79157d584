package imports

import (
	"bytes"
	"context"
	"encoding/json"
	"mime/multipart"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/brokerdesk/brokerdesk/app/contacts"
	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/app/imports"
	"github.com/brokerdesk/brokerdesk/app/platform/blobstore"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// importJob is an ImportJob as the tests read it.
type importJob struct {
	ID               string            `json:"id"`
	Status           string            `json:"status"`
	Format           string            `json:"format"`
	ContactType      string            `json:"contactType"`
	Encoding         *string           `json:"encoding"`
	Delimiter        *string           `json:"delimiter"`
	Headers          []string          `json:"headers"`
	Mapping          map[string]string `json:"mapping"`
	SuggestedMapping map[string]string `json:"suggestedMapping"`
	Tags             []string          `json:"tags"`
	RowCount         int               `json:"rowCount"`
	RowCounts        map[string]int    `json:"rowCounts"`
	OutcomeCounts    map[string]int    `json:"outcomeCounts"`
	Committed        int               `json:"committed"`
	Duplicates       *string           `json:"duplicates"`
	Error            *string           `json:"error"`
	CreatorID        *string           `json:"creatorId"`
}

// importRow is an ImportRow.
type importRow struct {
	Row          int      `json:"row"`
	Analysis     string   `json:"analysis"`
	Outcome      *string  `json:"outcome"`
	ContactID    *string  `json:"contactId"`
	DuplicateRow *int     `json:"duplicateRow"`
	Errors       []string `json:"errors"`
}

// contact is the part of a Contact the tests check.
type contact struct {
	ID        string         `json:"id"`
	FirstName *string        `json:"firstName"`
	LastName  *string        `json:"lastName"`
	Email     *string        `json:"email"`
	OwnerID   *string        `json:"ownerId"`
	Tags      []string       `json:"tags"`
	Address   map[string]any `json:"address"`
	Personal  map[string]any `json:"personal"`
	Business  map[string]any `json:"business"`
	Phones    []struct {
		Number string `json:"number"`
		Type   string `json:"type"`
	} `json:"phones"`
}

// multipartBody builds a multipart body of fields and, when filename is set, a file.
func multipartBody(t testing.TB, fields map[string]string, filename string, content []byte) ([]byte, map[string]string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		_ = w.WriteField(k, v)
	}
	if filename != "" {
		fw, _ := w.CreateFormFile("file", filename)
		_, _ = fw.Write(content)
	}
	_ = w.Close()
	return buf.Bytes(), map[string]string{"Content-Type": w.FormDataContentType()}
}

// upload posts an import.
func upload(t testing.TB, env *apitest.Env, key string, fields map[string]string, name string, content []byte) *apitest.Response {
	t.Helper()
	body, h := multipartBody(t, fields, name, content)
	return env.Do(t, apitest.Request{Method: "POST", Path: "/imports", Key: key, Body: body, Header: h})
}

// mustAnalyze uploads, wants 202 and waits until the analysis has ended.
func mustAnalyze(t testing.TB, env *apitest.Env, key string, fields map[string]string, content []byte) importJob {
	t.Helper()
	r := upload(t, env, key, fields, "kontakte.csv", content)
	if r.Status != 202 {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	var im importJob
	r.Decode(t, &im)
	return await(t, env, key, im.ID, "analyzed", "failed")
}

// await polls the import until its status is one of want (60 s at most).
func await(t testing.TB, env *apitest.Env, key, id string, want ...string) importJob {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		im := apitest.Get[importJob](t, env, key, "/imports/"+id)
		for _, w := range want {
			if im.Status == w {
				return im
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("import %s is %s after 60 s", id, im.Status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// mustCommit commits with body (nil: none) and waits until completed.
func mustCommit(t testing.TB, env *apitest.Env, key, id string, body any) importJob {
	t.Helper()
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/imports/" + id + "/commit", Key: key, Body: body})
	if r.Status != 202 {
		t.Fatalf("commit: %d %s", r.Status, r.Body)
	}
	return await(t, env, key, id, "completed", "failed")
}

// rows reads every row of an import listed with query (following the cursor).
func rows(t testing.TB, env *apitest.Env, key, id, query string) []importRow {
	t.Helper()
	var out []importRow
	cursor := ""
	for {
		path := "/imports/" + id + "/rows?limit=100" + query
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		p := apitest.Get[apitest.Page[importRow]](t, env, key, path)
		out = append(out, p.Data...)
		if !p.Pagination.HasMore {
			return out
		}
		cursor = p.Pagination.NextCursor
	}
}

func getContact(t testing.TB, env *apitest.Env, key, id string) contact {
	t.Helper()
	return apitest.Get[contact](t, env, key, "/contacts/"+id)
}

func mapping(m map[string]string) string {
	b, _ := json.Marshal(m)
	return string(b)
}

// module builds an imports module of its own over the package database, as the server
// builds it, with batch size and a hook after each batch: it runs steps the test controls
// (Module.Run), with no job on the queue for the server's workers to take.
func module(t testing.TB, env *apitest.Env, batch int, after func(uuid.UUID, int) error, maxRows ...int) *imports.Module {
	t.Helper()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, env.Config.JobsDatabaseURL)
	if err != nil {
		t.Fatalf("jobs pool: %v", err)
	}
	t.Cleanup(pool.Close)
	db := ent.NewClient(ent.Driver(tenancy.NewDriver(stdlib.OpenDBFromPool(pool))))
	bucket, err := blobstore.Open(ctx, env.Config.BlobURL)
	if err != nil {
		t.Fatalf("blob: %v", err)
	}
	t.Cleanup(func() { _ = bucket.Close() })
	d := imports.Deps{Pool: pool, DB: db, Bucket: bucket, BatchSize: batch, AfterBatch: after,
		Contacts: contacts.NewService(events.NewService(), env.Config.DataKeys, time.Now)}
	if len(maxRows) > 0 {
		d.MaxRows = maxRows[0]
	}
	return imports.New(d)
}
