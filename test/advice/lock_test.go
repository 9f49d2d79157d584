package advice

import (
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestAdvice_LockSigned: a completed signature request locks the drafts of its contact whose
// protocol it signed, and a locked record refuses every change. Catches a lock of another
// contact's record that names the same document, of a record whose protocol was not signed or
// went stale by a later change, a second advice_record.locked when a record is locked again,
// a PATCH or a rendering of a locked record accepted (or a bad PATCH answered 409 before 422).
func TestAdvice_LockSigned(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := newCompany(t, env)
	key := co.Secret
	c1, c2 := newContact(t, env, co.ID, "Eins", nil), newContact(t, env, co.ID, "Zwei", nil)
	signed, unsigned, stale := apitest.UploadPDF(t, env, key, c1, "a.pdf"), apitest.UploadPDF(t, env, key, c1, "b.pdf"),
		apitest.UploadPDF(t, env, key, c1, "c.pdf")
	locks := create(t, env, key, body(c1, nil))
	setDocument(t, env, co.ID, locks.ID, signed)
	other := create(t, env, key, body(c1, nil))
	setDocument(t, env, co.ID, other.ID, unsigned)
	otherContact := create(t, env, key, body(c2, nil))
	setDocument(t, env, co.ID, otherContact.ID, signed) // a document of c1: the request's contact decides
	changed := create(t, env, key, body(c1, nil))
	setDocument(t, env, co.ID, changed.ID, stale)
	if r := env.Do(t, patch(key, changed.ID, map[string]any{"advice": "geändert nach dem Rendern"})); r.Status != 200 {
		t.Fatalf("patch: %d %s", r.Status, r.Body)
	}

	completeSigning(t, env, co.ID, c1, signed, stale)
	got := get(t, env, key, locks.ID)
	if got.Status != "locked" || got.LockedAt == nil || got.DocumentID == nil || *got.DocumentID != signed {
		t.Errorf("signed record %+v", got)
	}
	for name, id := range map[string]string{"unsigned protocol": other.ID, "another contact": otherContact.ID, "stale protocol": changed.ID} {
		if g := get(t, env, key, id); g.Status != "draft" || g.LockedAt != nil {
			t.Errorf("%s: %+v", name, g)
		}
	}
	completeSigning(t, env, co.ID, c1, signed) // a second completion naming it
	if n := apitest.EventsAbout(t, env, key, "advice_record.locked", locks.ID); n != 1 {
		t.Errorf("%d advice_record.locked, want 1", n)
	}
	for _, id := range []string{other.ID, otherContact.ID, changed.ID} {
		if n := apitest.EventsAbout(t, env, key, "advice_record.locked", id); n != 0 {
			t.Errorf("%d advice_record.locked of %s, want 0", n, id)
		}
	}
	path := "/advice-records/" + locks.ID
	env.Run(t, []apitest.Case{
		{Name: "patch", Key: key, Method: "PATCH", Path: path, Body: `{"notes":"nachträglich"}`, Status: 409, Problem: "advice_record_locked"},
		{Name: "empty patch", Key: key, Method: "PATCH", Path: path, Body: `{}`, Status: 409, Problem: "advice_record_locked"},
		{Name: "bad patch is 422 first", Key: key, Method: "PATCH", Path: path, Body: `{"channel":"fax"}`, Status: 422,
			Check: apitest.FieldErrors("channel:invalid_enum")},
		{Name: "render", Key: key, Method: "POST", Path: path + "/document", Status: 409, Problem: "advice_record_locked"},
		{Name: "still readable", Key: key, Path: path, Status: 200},
	})
	if g := get(t, env, key, locks.ID); g.Notes != "" || *g.DocumentID != signed {
		t.Errorf("locked record changed: %+v", g)
	}
}
