// The inline script's entry point (build.mjs bundles it as an IIFE): mount the output it sits in.
import { start } from "./inline-graph.js";

start();
