package openapi

import "testing"

// TestOpenAPI_Inputs: POST and PUT bodies list the members whose schema does not take null,
// in Fiber's route syntax; members typed [T, 'null'] and PATCH bodies are not listed; query
// parameters are listed by name.
func TestOpenAPI_Inputs(t *testing.T) {
	m, err := Inputs()
	if err != nil {
		t.Fatal(err)
	}
	tasks := m["POST /api/public/v1/tasks"].NonNullable
	if !tasks["title"] || !tasks["description"] || tasks["contactId"] || tasks["dueAt"] {
		t.Errorf("POST /tasks: %v", tasks)
	}
	if notes := m["POST /api/public/v1/contacts/:contactId/notes"].NonNullable; !notes["content"] {
		t.Errorf("POST /contacts/:contactId/notes: %v", notes)
	}
	if q := m["GET /api/public/v1/tasks"].Query; !q["cursor"] || !q["limit"] || !q["contactId"] {
		t.Errorf("GET /tasks query: %v", q)
	}
	for k, in := range m {
		if len(in.NonNullable) > 0 && k[:4] != "POST" && k[:3] != "PUT" {
			t.Errorf("%s lists non-nullable members", k)
		}
	}
}
