// Package privacy tests the data-subject requests end to end: GET /privacy-requests and its
// filters, POST /contacts/{contactId}/privacy/data-export with its ZIP built on the job queue
// and served by the public download link (expiry by the server's clock, other tokens), the
// error cases, visibility for an agent and isolation between companies.
package privacy

import (
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

// skew moves the server's clock (app.WithClock): the expiry test sets it, alone (it does not
// run in parallel), and puts it back.
var skew atomic.Int64

func now() time.Time { return time.Now().Add(time.Duration(skew.Load())) }

// setup returns the package's server, working jobs like a serve process (exports run on the
// queue), on the skewable clock.
func setup(t testing.TB) *apitest.Env { return apitest.Working(t, app.WithClock(now)) }
