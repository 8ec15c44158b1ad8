// Printed after npm test: the tests that need system packages run under their own command.
console.log("Tests that need system packages (sshd, Slurm, GNU parallel, jq, bubblewrap, Chromium…) run with: npm run test:hosts (README: Tests)");
