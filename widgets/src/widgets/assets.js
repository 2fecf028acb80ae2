// What a widget module asks its kernel for instead of carrying it (a module is a trait of its
// widget, saved with the widget's state): `requestAsset(model, "layout-worker")` resolves to
// the asset's base64 text, sent by VizgradWidget._on_asset_request (vizgrad/widgets/base.py).

/** The base64 text of asset ``name``, from the kernel behind ``model``. */
export function requestAsset(model, name) {
  return new Promise((resolve, reject) => {
    const answer = (message) => {
      if (message?.type !== "asset" || message.name !== name) return;
      model.off("msg:custom", answer);
      if (message.error) reject(new Error(message.error));
      else resolve(message.base64);
    };
    model.on("msg:custom", answer);
    model.send({ type: "asset", name });
  });
}
