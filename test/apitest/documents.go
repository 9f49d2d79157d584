package apitest

import (
	"bytes"
	"mime/multipart"
	"net/textproto"
	"testing"
)

// PDF is a minimal PDF document (our sniffing types it application/pdf).
var PDF = []byte("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n")

// UploadPDF uploads PDF as filename to contact's documents (type policy) with key and returns
// the document's id; anything but 201 fails the test.
func UploadPDF(t testing.TB, env *Env, key, contact, filename string) string {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	_ = w.WriteField("type", "policy")
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="file"; filename="`+filename+`"`)
	h.Set("Content-Type", "application/pdf")
	fw, _ := w.CreatePart(h)
	_, _ = fw.Write(PDF)
	_ = w.Close()
	r := env.Do(t, Request{Method: "POST", Path: "/contacts/" + contact + "/documents", Key: key, Body: buf.Bytes(),
		Header: map[string]string{"Content-Type": w.FormDataContentType()}})
	if r.Status != 201 {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	var d struct {
		ID string `json:"id"`
	}
	r.Decode(t, &d)
	return d.ID
}
