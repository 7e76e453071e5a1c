package compose

// shapes is the kind registry: one line per kind, in help order. Adding a
// kind is a new kind_NAME.go implementing Shape and one line here.
func shapes() []Shape {
	return []Shape{
		singleShape{},
		redlockShape{},
		replicatedShape{},
		clusterShape{},
		etcdShape{},
		postgresShape{},
		zookeeperShape{},
		natsShape{},
	}
}

// backends is the backend registry: one line per backend, in help order
// (their URL flags are listed in this order).
// Adding a backend is a new backend_NAME.go implementing Backend, its kinds
// (kind_NAME.go, one line each in shapes), and one line here.
func backends() []Backend {
	return []Backend{
		redisBackend{},
		etcdBackend{},
		zookeeperBackend{},
		natsBackend{},
		postgresBackend{},
	}
}
