package app

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The floor plan of docs/architecture.md, held by a test so that it stays true: machinery under
// platform/ and file formats under formats/ never import a resource area; an area imports
// another area only through a seam listed here with its reason; services stay HTTP-free.

const module = "github.com/brokerdesk/brokerdesk/app/"

// seams are the area-to-area imports the floor plan allows, each with what it is for. A new
// import of one area by another is a design decision: add it here and to the architecture doc.
var seams = map[string]string{
	"advice -> doctemplates":    "a record's protocol PDF is rendered from the company's advice_protocol template",
	"advice -> documents":       "the rendered protocol is answered as a Document (documents.NewView)",
	"advice -> events":          "writes record their event in the same transaction",
	"appointments -> events":    "writes record their event in the same transaction",
	"commissions -> events":     "writes record their event in the same transaction",
	"contacts -> events":        "writes record their event in the same transaction",
	"contracts -> events":       "writes record their event in the same transaction",
	"correspondence -> emails":  "a case is sent as an e-mail (emails.Service.Send)",
	"correspondence -> events":  "writes record their event in the same transaction",
	"doctemplates -> documents": "a generated PDF is filed as the contact's document (documents.Service)",
	"doctemplates -> events":    "writes record their event in the same transaction",
	"documents -> events":       "writes record their event in the same transaction",
	"emails -> events":          "writes record their event in the same transaction",
	"extractions -> contracts":  "apply writes a contract as PATCH and POST /contracts do (contracts.Service: validation, events) and answers a Contract",
	"extractions -> documents":  "an extraction reads its document (documents.Service.Get, Open)",
	"intake -> events":          "writes record their event in the same transaction",
	"imports -> contacts":       "an import validates its rows as POST /contacts does and creates or fills contacts (contacts.Service)",
	"intake -> leads":           "a submission creates a lead (leads.Service)",
	"leads -> contacts":         "conversion creates or reuses a contact (contacts.Service)",
	"leads -> events":           "writes record their event in the same transaction",
	"oauth -> events":           "grants and revocations are events",
	"operator -> account":       "operator use cases create companies",
	"operator -> delegations":   "operator use cases manage delegations",
	"operator -> doctemplates":  "operator use cases write document templates and standard documents, and seed a new company's defaults",
	"operator -> emails":        "operator use cases configure mailboxes (sealed passwords) and templates",
	"operator -> events":        "operator writes record their events",
	"operator -> users":         "operator use cases create users",
	"portal -> contacts":        "an approved change request updates the contact as one write (contacts.Service); change requests read the contact's fields",
	"portal -> documents":       "a signed-in customer downloads its released documents (documents.Service.Open)",
	"portal -> emails":          "invitations and password resets are mailed (emails.Service.Send, emails.SenderMailbox)",
	"portal -> events":          "writes record their event in the same transaction",
	"portal -> signatures":      "a signed-in customer is sent to its signer's signing page (signatures.Module.SignerURL)",
	"portfolio -> contacts":     "an import creates and matches contacts (contacts.Service)",
	"portfolio -> contracts":    "an import creates contracts (contracts.Service)",
	"portfolio -> events":       "imports record their events",
	"reports -> contracts":      "the renewals report answers a Page of Contract (contracts.View)",
	"privacy -> contacts":       "an export writes the contact as the API shows it with its groups decrypted (contacts.Service.View); an erasure deletes it with its delete hooks (contacts.Service.Delete)",
	"privacy -> emails":         "an erasure first brings every mailbox of the company up to date (emails.Module.SyncMailbox), so no message held on the server returns unlinked after it",
	"signatures -> documents":   "the sealed PDF is filed as the contact's document; sources are read from documents",
	"signatures -> emails":      "signers get their links and one-time codes by e-mail (emails.Service.Send)",
	"signatures -> events":      "writes record their event in the same transaction",
	"tasks -> events":           "writes record their event in the same transaction",
	"webhooks -> events":        "deliveries carry events (events.Visible)",
}

// httpPackages are what a service must not touch: the request belongs to handlers.
var httpPackages = map[string]bool{
	"github.com/gofiber/fiber/v2":                         true,
	"github.com/brokerdesk/brokerdesk/app/platform/httpx": true,
}

type goFile struct {
	dir  string // relative to app/, slash-separated
	path string
	file *ast.File
}

func parseApp(t *testing.T) []goFile {
	t.Helper()
	var files []goFile
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files = append(files, goFile{dir: filepath.ToSlash(filepath.Dir(path)), path: path, file: f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 100 {
		t.Fatalf("read %d Go files below app/: the walk did not find the tree", len(files))
	}
	return files
}

// area is the resource area a directory belongs to, "" for the app package itself, platform/
// and formats/ (which are not areas).
func area(dir string) string {
	top, _, _ := strings.Cut(dir, "/")
	switch top {
	case ".", "platform", "formats":
		return ""
	}
	return top
}

func importsOf(f *ast.File) []string {
	var out []string
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		out = append(out, p)
	}
	return out
}

// TestFloorPlan_ImportsPointDown fails on machinery or a format importing an area and on an
// area importing another area without a listed seam; it also fails on a listed seam that is no
// longer used, so the list stays the truth.
func TestFloorPlan_ImportsPointDown(t *testing.T) {
	used := map[string]bool{}
	var bad []string
	for _, f := range parseApp(t) {
		top, _, _ := strings.Cut(f.dir, "/")
		for _, p := range importsOf(f.file) {
			rel, ok := strings.CutPrefix(p, module)
			if !ok {
				continue
			}
			to := area(rel)
			if to == "" {
				continue // platform, formats
			}
			switch {
			case top == "platform" || top == "formats":
				bad = append(bad, f.path+": "+top+" imports the area "+to)
			case top == ".":
				// the app package wires every area: that is its job
			default:
				from := area(f.dir)
				if from == to {
					continue
				}
				seam := from + " -> " + to
				if _, ok := seams[seam]; !ok {
					bad = append(bad, f.path+": "+seam+" is no seam of the floor plan")
				}
				used[seam] = true
			}
		}
	}
	for s := range seams {
		if !used[s] {
			bad = append(bad, "seam "+s+" is listed but no longer used: delete it here and in docs/architecture.md")
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}

// TestFloorPlan_ServicesHTTPFree fails on a method of an area's Service that takes, returns or
// uses anything of fiber or httpx: services answer in aggregates and errs kinds, handlers speak
// HTTP.
func TestFloorPlan_ServicesHTTPFree(t *testing.T) {
	var bad []string
	methods := 0
	for _, f := range parseApp(t) {
		if area(f.dir) == "" {
			continue
		}
		names := map[string]bool{} // local names of the HTTP packages in this file
		for _, imp := range f.file.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !httpPackages[p] {
				continue
			}
			name := p[strings.LastIndex(p, "/")+1:]
			if strings.HasSuffix(p, "/v2") {
				name = "fiber"
			}
			if imp.Name != nil {
				name = imp.Name.Name
			}
			names[name] = true
		}
		for _, d := range f.file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || receiver(fn) != "Service" {
				continue
			}
			methods++
			if len(names) == 0 {
				continue
			}
			ast.Inspect(fn, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && names[id.Name] {
					bad = append(bad, f.path+": (*Service)."+fn.Name.Name+" uses "+id.Name+"."+sel.Sel.Name)
					return false
				}
				return true
			})
		}
	}
	if methods < 50 {
		t.Fatalf("found %d Service methods: the check looked in the wrong place", methods)
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}

func receiver(fn *ast.FuncDecl) string {
	typ := fn.Recv.List[0].Type
	if s, ok := typ.(*ast.StarExpr); ok {
		typ = s.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}
