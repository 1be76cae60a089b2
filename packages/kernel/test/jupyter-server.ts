// The kernel tests' loopback Jupyter Server; one implementation, shared with the kernel benchmark.
export { jupyterServerPython, startJupyterServer, type TestJupyterServer } from "../src/testing/jupyter-server.js";
