module temporalfilters.org/go/installcheck

go 1.19

require temporalfilters.org/go/temporalfilters v0.1.0

// run.sh points this at the exported module it is given (go mod edit
// -replace); a user's project names its own copy of the module directory.
replace temporalfilters.org/go/temporalfilters => ../temporalfilters
