package openapi

import "testing"

// TestOpenAPI_Inputs: JSON bodies list the members whose schema does not take null, in
// Fiber's route syntax; members typed [T, 'null'] are not listed; query parameters are listed
// by name.
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
	if phones := m["PATCH /api/public/v1/contacts/:contactId/phones/:phoneId"].NonNullable; !phones["number"] {
		t.Errorf("PATCH phones: %v", phones)
	}
}
