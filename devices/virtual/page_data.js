// What the virtual phone's pages read of the catalog (Screen._give_data): system.html its
// window.WP_SYSTEM, each app's index.html its window.WP. They are getters, read when the page
// asks: an app's iframe may run this in its first, empty document and keep that window for
// the app's page, without running it again.
(() => {
  const data = WP_DATA;
  const ours = () => location.origin === data.origin;
  const slug = () => /^\/apps\/([^/]+)\/index\.html$/.exec(location.pathname)?.[1];
  Object.defineProperty(window, "WP_SYSTEM", {
    configurable: true,
    get: () => (ours() && location.pathname === "/system.html" ? data.system : undefined),
  });
  Object.defineProperty(window, "WP", {
    configurable: true,
    get: () => {
      const app = slug();
      return ours() && app && Object.hasOwn(data.apps, app) ? data.apps[app] : undefined;
    },
  });
})();
