# Targets mirror the npm scripts; `make help` lists them.
.PHONY: help setup test typecheck lint format serve bench

help:
	@echo "make setup      install dependencies (npm ci)"
	@echo "make test       type-check, lint and run every test (npm test)"
	@echo "make typecheck  tsc only"
	@echo "make lint       biome only"
	@echo "make format     biome, fixing what it can"
	@echo "make serve      run the reference statement API (plateau serve)"
	@echo "make bench      run the benchmarks in bench/"

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

bench:
	npm run bench:instrumentation
