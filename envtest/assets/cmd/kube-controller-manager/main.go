// kube-controller-manager for rkb's envtest: upstream's controllers (garbage collector,
// namespace, deployment, replicaset, ...), so tests see what a cluster does with their
// objects. Built on request only: `rkb setup-envtest --with controller-manager`.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register" // --logging-format=json
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
