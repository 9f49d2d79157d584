package httpx

import (
	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/policy"
)

// Collection is the five routes the spec gives a resource collection: GET (list) and POST
// (create, behind the Idempotency-Key middleware) on Path, GET, PATCH and DELETE on one item
// Path/{Param}. Reads need the scope Scope:read, writes Scope:write.
//
//	httpx.Collection{Path: "/tasks", Param: "taskId", Scope: "tasks", Idem: h.idem, List: h.list,
//		Create: h.create, Get: h.get, Update: h.update, Delete: h.delete}.Mount(r)
type Collection struct {
	Path, Param, Scope                string
	Idem                              fiber.Handler
	List, Create, Get, Update, Delete fiber.Handler
}

// Mount registers the five routes on r, which authenticates every route it registers.
func (rc Collection) Mount(r fiber.Router) {
	read, write := policy.Require(rc.Scope+":read"), policy.Require(rc.Scope+":write")
	item := rc.Path + "/:" + rc.Param
	r.Get(rc.Path, read, rc.List)
	r.Post(rc.Path, write, rc.Idem, rc.Create)
	r.Get(item, read, rc.Get)
	r.Patch(item, write, rc.Update)
	r.Delete(item, write, rc.Delete)
}
