package extref

import (
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

type input struct {
	Name *string                  `json:"name"`
	Refs []schematype.ExternalRef `json:"externalReferences"`
}

func (in *input) Validate() error {
	var v errs.Invalid
	v.Require("name", in.Name != nil)
	return v.Err()
}

// TestDecode: the path's and the body's field errors answer together; a body that cannot be
// read answers alone, even with a bad path.
func TestDecode(t *testing.T) {
	app := fiber.New(fiber.Config{ErrorHandler: httpx.ErrorHandler})
	app.Put("/external/:source/things/:externalId", func(c *fiber.Ctx) error {
		var in input
		ref, err := Decode(c, &in)
		if err != nil {
			return err
		}
		return c.JSON(ref)
	})
	long := strings.Repeat("a", MaxExternalID+1)
	for _, tc := range []struct {
		name, path, body string
		status           int
		fields           []string
	}{
		{"valid", "/external/ams/things/E%2F1", `{"name":"a"}`, 200, nil},
		{"both bad", "/external/%20/things/" + long, `{}`, 422, []string{"name", "path.externalId", "path.source"}},
		{"path bad", "/external/ams/things/E%00", `{"name":"a"}`, 422, []string{"path.externalId"}},
		{"body bad", "/external/ams/things/E-1", `{}`, 422, []string{"name"}},
		{"malformed body, bad path", "/external/%20/things/E-1", `{"name":`, 400, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest("PUT", tc.path, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			res, err := app.Test(req)
			if err != nil {
				t.Fatal(err)
			}
			if res.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", res.StatusCode, tc.status)
			}
			var body struct {
				schematype.ExternalRef
				Errors []struct{ Field string } `json:"errors"`
			}
			if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range body.Errors {
				got = append(got, e.Field)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.fields) {
				t.Errorf("fields %v, want %v", got, tc.fields)
			}
			if tc.name == "valid" && (body.Source != "ams" || body.ExternalID != "E/1") {
				t.Errorf("ref %+v", body.ExternalRef)
			}
		})
	}
}

// TestKeep: the path's reference is added once, and counted when the resource asks.
func TestKeep(t *testing.T) {
	ref := schematype.ExternalRef{Source: "ams", ExternalID: "E-1"}
	u := Upsert[struct{}, input, struct{}]{Refs: func(in *input) *[]schematype.ExternalRef { return &in.Refs }}
	in := input{Refs: []schematype.ExternalRef{ref}}
	if err := u.keep(&in, ref); err != nil || len(in.Refs) != 1 {
		t.Errorf("kept twice: %v %v", in.Refs, err)
	}
	full := make([]schematype.ExternalRef, MaxRefs)
	for i := range full {
		full[i] = schematype.ExternalRef{Source: "s", ExternalID: strings.Repeat("x", i+1)}
	}
	in = input{Refs: full}
	if err := u.keep(&in, ref); err != nil || len(in.Refs) != MaxRefs+1 || len(full) != MaxRefs {
		t.Errorf("without CountPathRef: %d refs, %v", len(in.Refs), err)
	}
	u.CountPathRef = true
	in = input{Refs: full}
	if err := u.keep(&in, ref); err == nil || !strings.Contains(err.Error(), "the one in the path included") {
		t.Error("21 references accepted")
	}
}

func TestCheck(t *testing.T) {
	var v errs.Invalid
	Check(&v, []schematype.ExternalRef{{Source: "a", ExternalID: "1"}, {Source: "a", ExternalID: "1"},
		{Source: "", ExternalID: "x\x00"}})
	var got []string
	for _, e := range v.Errors {
		got = append(got, e.Field+":"+e.Code)
	}
	want := []string{"externalReferences.1.externalId:duplicate_reference", "externalReferences.2.source:invalid_length",
		"externalReferences.2.externalId:invalid_character"}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("errors %v, want %v", got, want)
	}
}
