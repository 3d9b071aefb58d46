module temporalfilters.org/go/examples

go 1.19

require temporalfilters.org/go/temporalfilters v0.1.0

replace temporalfilters.org/go/temporalfilters => ../../bindings/go
