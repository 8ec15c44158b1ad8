// Printed after npm test: the global installs and the tests that need system packages run under their own commands.
console.log("The global installs (npm pack, npm install -g) are tested by: npm run test:install (README: Development)");
console.log("Tests that need system packages (sshd, Slurm, GNU parallel, jq, bubblewrap, Chromium…) run with: npm run test:hosts (README: Development)");
