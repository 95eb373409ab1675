# Terraform: hold the resources that switch traffic until the gate opens. A non-zero exit of the
# local-exec (1 closed at the timeout, 3 unknown) fails the apply before the record changes.
resource "null_resource" "cutover_gate" {
  triggers = { run_id = var.cutover_run_id }
  provisioner "local-exec" {
    command = <<-EOT
      cutover-prep gate --run-id ${var.cutover_run_id} --target ${var.target_instance} \
        --wait --timeout 7200 --poll 60
    EOT
  }
}

resource "aws_route53_record" "database" {
  depends_on = [null_resource.cutover_gate]   # switch only after the gate opened (exit 0)
  zone_id    = var.zone_id
  name       = "db.internal.example.com"
  type       = "CNAME"
  ttl        = 30
  records    = [var.target_endpoint]
}
