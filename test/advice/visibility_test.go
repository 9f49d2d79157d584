package advice

import (
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestAdvice_Visibility: a record is exactly as visible as its contact, for every operation
// and its events. Catches a user-bound credential reading, listing, patching or rendering the
// record of a contact it may not see, a record created for such a contact (it must be 422
// unknown_contact, not a record the agent then cannot see), an event that reaches an agent who
// does not see the contact, an agent that cannot read what it created.
func TestAdvice_Visibility(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co, b := newCompany(t, env), newCompany(t, env)
	anna, ben, boss := env.NewUser(t, co, "agent"), env.NewUser(t, co, "agent"), env.NewUser(t, co, "manager")
	annas := newContact(t, env, co.ID, "Annas", &anna.ID)
	bens := newContact(t, env, co.ID, "Bens", &ben.ID)
	annaKey, benKey, bossKey := co.UserKey(t, anna), co.UserKey(t, ben), co.UserKey(t, boss)

	// Anna reads what she creates; she is its creator and advisor.
	rec := create(t, env, annaKey, body(annas, nil))
	if got := get(t, env, annaKey, rec.ID); got.CreatorID == nil || *got.CreatorID != anna.ID.String() || *got.AdvisorID != anna.ID.String() {
		t.Errorf("anna's record %+v", got)
	}
	bensRec := create(t, env, benKey, body(bens, nil))
	path := "/advice-records/" + rec.ID
	env.Run(t, []apitest.Case{
		{Name: "ben reads anna's contact's record", Key: benKey, Path: path, Status: 404},
		{Name: "ben patches it", Key: benKey, Method: "PATCH", Path: path, Body: `{"notes":"x"}`, Status: 404},
		{Name: "ben renders it", Key: benKey, Method: "POST", Path: path + "/document", Status: 404},
		{Name: "ben creates one for anna's contact", Key: benKey, Method: "POST", Path: "/advice-records", Body: body(annas, nil),
			Status: 422, Check: apitest.FieldErrors("contactId:unknown_contact")},
		{Name: "the manager reads it", Key: bossKey, Path: path, Status: 200},
		{Name: "a company key reads it", Key: co.Secret, Path: path, Status: 200},
		{Name: "another company", Key: b.Secret, Path: path, Status: 404},
		{Name: "anna renders her own", Key: annaKey, Method: "POST", Path: path + "/document", Status: 201},
	})
	for _, tc := range []struct {
		name, key string
		want      []string
	}{
		{"anna", annaKey, []string{rec.ID}},
		{"ben", benKey, []string{bensRec.ID}},
		{"boss", bossKey, []string{rec.ID, bensRec.ID}},
	} {
		got := ids(list(t, env, tc.key, "limit=200"))
		if len(got) != len(tc.want) || !contains(got, tc.want[0]) || !contains(got, tc.want[len(tc.want)-1]) {
			t.Errorf("%s lists %v, want %v", tc.name, got, tc.want)
		}
		if n := len(list(t, env, tc.key, "contactId="+annas)); (n == 1) != contains(tc.want, rec.ID) || n > 1 {
			t.Errorf("%s lists %d records of anna's contact", tc.name, n)
		}
	}
	for _, typ := range []string{"advice_record.created", "advice_record.updated"} {
		if n := apitest.EventsAbout(t, env, annaKey, typ, rec.ID); n != 1 {
			t.Errorf("anna sees %d %s, want 1", n, typ)
		}
		if n := apitest.EventsAbout(t, env, benKey, typ, rec.ID); n != 0 {
			t.Errorf("ben sees %d %s of anna's contact's record, want 0", n, typ)
		}
	}
}
