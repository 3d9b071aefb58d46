module temporalfilters

go 1.19
