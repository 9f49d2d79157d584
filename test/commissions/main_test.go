// Package commissions tests /commission-statements and /commission-entries end to end: the
// upload and its error cases, the parse on the job queue, matching to contracts, the status
// and link patches, visibility of entries for an agent, and the acceptance run of a GDV file
// whose contracts are imported through /portfolio-transfers and whose 0400 statement matches
// every entry with the file's sum.
package commissions

import (
	"os"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

// setup returns the package's server, working jobs like a serve process (the parse runs on
// the queue).
func setup(t testing.TB) *apitest.Env { return apitest.Working(t) }
