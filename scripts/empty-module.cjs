// What the client bundle has in place of a package read only in a browser (scripts/pack-client.mjs: worker-timers).
module.exports = {};
