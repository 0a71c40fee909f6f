package loadgen

import (
	"fmt"

	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/plan"
)

// device is the driver's description of the group's client c with its identity: the client id
// its group's pattern gives it (plan.Identity; a fleet group's is already its Fleet.ClientID)
// and the credentials it shows the broker, from the patterns or the listed ones.
func (gr *groupRun) device(r *run, role drivers.Role, c plan.Client) drivers.Client {
	dc := gr.client(r, role, c)
	g := gr.g
	id := g.Identity
	if id == nil {
		return dc
	}
	if g.Fleet == nil && id.ClientID != "" {
		dc.ID = g.DeviceClientID(role == drivers.Publisher, c.Index, r.o.RunID)
	}
	if id.Listed() {
		// checkCredentials made sure every device has its line.
		cr := r.o.Credentials[g.Name][dc.ID]
		dc.Username, dc.Password = cr.Username, cr.Password
		return dc
	}
	cr := g.DeviceCredential(g.DeviceIndex(role == drivers.Publisher, c.Index), r.o.RunID, dc.ID)
	dc.Username, dc.Password = cr.Username, cr.Password
	return dc
}

// checkCredentials refuses to start a group whose devices' credentials are listed (a file, a
// Secret) when the list was not given or misses one of them.
func (r *run) checkCredentials(g *plan.Group) error {
	if !g.Identity.Listed() {
		return nil
	}
	src := CredentialsSource(g.Identity)
	creds, ok := r.o.Credentials[g.Name]
	if !ok {
		return fmt.Errorf("group %s: its devices' credentials are listed in %s, which this worker was not given (msgbench loadgen --credentials %s=FILE)", g.Name, src, g.Name)
	}
	return g.CheckCredentials(creds, src, r.o.RunID)
}

// CredentialsSource names where a group's credentials are listed, as the spec says.
func CredentialsSource(id *plan.Identity) string {
	if id.CredentialsSecret != "" {
		return "Secret " + id.CredentialsSecret + " (key " + plan.CredentialsKey + ")"
	}
	return id.CredentialsFile
}
