// Package extractions serves contract extraction (issue 25): POST
// /documents/{documentId}/extractions starts reading contract data from an insurer document on
// a river job (its text layer, or Tesseract OCR of a scan), GET /extractions/{extractionId}
// shows the fields found with their confidence and evidence, and POST
// /extractions/{extractionId}/apply writes chosen fields to a contract. An extraction costs
// points from the one ledger (app/platform/points), refunded when it fails.
//
// Files: service.go (the API's use cases), input.go, view.go, handler.go, worker.go (the job),
// read.go (text layer and OCR subprocesses), rules.go (the field rules).
package extractions

import (
	"time"

	"github.com/riverqueue/river"
	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/app/contracts"
	"github.com/brokerdesk/brokerdesk/app/documents"
	"github.com/brokerdesk/brokerdesk/app/platform/jobs"
	"github.com/brokerdesk/brokerdesk/ent"
)

// Deps are what the module needs.
type Deps struct {
	DB        *ent.Client // ent on the job pool, for the worker's transactions
	Docs      *documents.Service
	Contracts *contracts.Service
	Now       func() time.Time
	Log       zerolog.Logger
	Reader    Reader // the text layer and OCR tools (read.go); zero: found in PATH
}

// Module holds the service and the extraction worker.
type Module struct {
	d     Deps
	queue *jobs.Client
	svc   *Service
}

// Service runs the use cases of the API.
type Service struct{ m *Module }

// New builds the module.
func New(d Deps) *Module {
	if d.Now == nil {
		d.Now = time.Now
	}
	m := &Module{d: d}
	m.svc = &Service{m: m}
	return m
}

// Service returns the API's use cases.
func (m *Module) Service() *Service { return m.svc }

// Bind gives the module the job queue (built after the workers are registered).
func (m *Module) Bind(q *jobs.Client) { m.queue = q }

// AddWorkers registers the extraction worker (worker.go).
func (m *Module) AddWorkers(w *river.Workers) { river.AddWorker(w, &Worker{m: m}) }
