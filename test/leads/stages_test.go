package leads

import (
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestLeads_Stages(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	portal := env.NewCompany(t, "customer_portal")
	manager := env.NewUser(t, a, "manager")

	board := func(want ...string) func(t *testing.T, r *apitest.Response) {
		return func(t *testing.T, r *apitest.Response) {
			var body struct {
				Data []stage `json:"data"`
			}
			r.Decode(t, &body)
			var got []string
			for _, s := range body.Data {
				got = append(got, s.Key)
			}
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("board %v, want %v", got, want)
			}
		}
	}
	env.Run(t, []apitest.Case{
		{Name: "a new company has new and converted", Key: a.Secret, Path: "/lead-stages", Status: 200, Check: func(t *testing.T, r *apitest.Response) {
			var body struct {
				Data []stage `json:"data"`
			}
			r.Decode(t, &body)
			if len(body.Data) != 2 || body.Data[0].Key != "new" || body.Data[0].IsFinal ||
				body.Data[1].Key != "converted" || !body.Data[1].IsFinal {
				t.Errorf("got %+v", body.Data)
			}
		}},
		{Name: "adds a stage after the last but converted", Key: a.Secret, Method: "POST", Path: "/lead-stages", Status: 201,
			Body: `{"name":"Termin vereinbart"}`, Check: func(t *testing.T, r *apitest.Response) {
				var s stage
				r.Decode(t, &s)
				if s.Key != "termin_vereinbart" || s.Position != 1 || s.Color != "#94a3b8" || s.IsFinal {
					t.Errorf("got %+v", s)
				}
			}},
		{Name: "with color, position and final", Key: a.Secret, Method: "POST", Path: "/lead-stages", Status: 201,
			Body: `{"name":"Verloren (Ärger)","color":"#ef4444","position":2000,"isFinal":true}`, Check: func(t *testing.T, r *apitest.Response) {
				var s stage
				r.Decode(t, &s)
				if s.Key != "verloren_aerger" || s.Position != 2000 || !s.IsFinal || s.Color != "#ef4444" {
					t.Errorf("got %+v", s)
				}
			}},
		{Name: "board order", Key: a.Secret, Path: "/lead-stages", Status: 200,
			Check: board("new", "termin_vereinbart", "converted", "verloren_aerger")},
		{Name: "same name in other case", Key: a.Secret, Method: "POST", Path: "/lead-stages", Body: `{"name":"termin VEREINBART"}`,
			Status: 409, Problem: "stage_exists"},
		{Name: "a name whose key exists", Key: a.Secret, Method: "POST", Path: "/lead-stages", Body: `{"name":"New"}`,
			Status: 409, Problem: "stage_exists"},
		{Name: "every bad field", Key: a.Secret, Method: "POST", Path: "/lead-stages", Status: 422,
			Body:  `{"name":"` + strings.Repeat("x", 101) + `","color":"red","position":-1}`,
			Check: apitest.FieldErrors("name:too_long", "color:invalid_color", "position:out_of_range")},
		{Name: "name required", Key: a.Secret, Method: "POST", Path: "/lead-stages", Body: `{"name":"  "}`, Status: 422,
			Check: apitest.FieldErrors("name:required")},
		{Name: "name without letters", Key: a.Secret, Method: "POST", Path: "/lead-stages", Body: `{"name":"!!!"}`, Status: 422,
			Check: apitest.FieldErrors("name:invalid_name")},
		{Name: "malformed", Key: a.Secret, Method: "POST", Path: "/lead-stages", Body: `{`, Status: 400, Problem: "malformed_json"},
		{Name: "B has its own board", Key: b.Secret, Path: "/lead-stages", Status: 200, Check: board("new", "converted")},
		{Name: "B may use the same name", Key: b.Secret, Method: "POST", Path: "/lead-stages", Body: `{"name":"Termin vereinbart"}`, Status: 201},
		{Name: "leads:write is not admin:write", Key: a.KeyWithScopes(t, "leads:write"), Method: "POST", Path: "/lead-stages",
			Body: `{"name":"X"}`, Status: 403, Problem: "insufficient_scope"},
		{Name: "a manager's role may not", Key: a.UserKey(t, manager), Method: "POST", Path: "/lead-stages",
			Body: `{"name":"X"}`, Status: 403, Problem: "role_forbidden"},
		{Name: "feature not licensed (create)", Key: portal.Secret, Method: "POST", Path: "/lead-stages", Body: `{"name":"X"}`,
			Status: 403, Problem: "feature_not_licensed"},
		{Name: "feature not licensed (list)", Key: portal.Secret, Path: "/lead-stages", Status: 403, Problem: "feature_not_licensed"},
		{Name: "read scope missing", Key: a.KeyWithScopes(t, "contacts:read"), Path: "/lead-stages", Status: 403, Problem: "insufficient_scope"},
		{Name: "no key", Path: "/lead-stages", Status: 401},
		{Name: "no key (create)", Method: "POST", Path: "/lead-stages", Body: `{"name":"X"}`, Status: 401},
	})
}
