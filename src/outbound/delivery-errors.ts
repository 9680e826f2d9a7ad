// O12, O13, A19: the two refusals of the delivery admin (./delivery-admin.ts): a conflict with the delivery's or its
// endpoint's state (the API's 409), and a body search by someone who may not read bodies (the API's 403).
export class DeliveryConflictError extends Error {
  override name = 'DeliveryConflictError';
}

/** A19: the payment-reference search matches inside event bodies, so only those who may read bodies may run it. */
export class BodySearchForbiddenError extends Error {
  override name = 'BodySearchForbiddenError';
  constructor() {
    super(
      'viewers cannot search deliveries by payment reference (it matches inside event bodies, which a viewer may not read); search reconciliations instead',
    );
  }
}
