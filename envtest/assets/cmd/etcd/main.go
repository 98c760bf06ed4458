// etcd for rkb's envtest: the release that Kubernetes' own go.mod pairs with.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
