# Targets mirror the npm scripts; `make help` lists them.
.PHONY: help setup test typecheck lint format serve bench

help:
	@echo "make setup      install dependencies (npm ci)"
	@echo "make test       type-check, lint and run every test (npm test)"
	@echo "make typecheck  tsc only"
	@echo "make lint       biome only"
	@echo "make format     biome, fixing what it can"
	@echo "make serve      run the reference statement API (plateau serve)"
	@echo "make bench      run every benchmark in bench/, one after another (about 15 min; nothing else may run)"

setup:
	npm ci

test:
	npm test

typecheck:
	npm run typecheck

lint:
	npm run lint

format:
	npm run format

serve:
	npm run serve

# One at a time: each measures CPU on a shared 2-core machine.
bench:
	npm run bench:instrumentation
	npm run bench:steps-poll
	npm run bench:engine
	npm run bench:engine-vs-k6
	npm run bench:engine-scale
	npm run bench:engine-ramp
	npm run bench:engine-connections
	npm run bench:analysis
	npm run bench:outputs
	npm run bench:vu-instances
