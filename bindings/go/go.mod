module temporalfilters.org/go/temporalfilters

go 1.19
